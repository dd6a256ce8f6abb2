"""The browser front end: `helpdesk serve` puts the Textual screens in a browser with
textual-serve. A front end: it calls the desk and account services, never the store."""
