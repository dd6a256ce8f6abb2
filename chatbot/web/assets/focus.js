// Where the keyboard is, from the page's load to the session's end.
//
// - The terminal has it from the start. textual-serve's page leaves it unfocused until a click:
//   what a customer typed on arrival was lost, the app drew itself inactive (no key footer) and
//   its question box had no cursor. Focusing the terminal's input also tells the app it has the
//   focus, as a click would. (This page focused it once the app had drawn, and the keys typed
//   while it said "connecting…" went to the page's body and were lost.)
// - What the terminal sends the app before the app has drawn (keys, the focus) waits, and goes
//   in order once it has: before then the socket may not be open yet, and the app not running.
// - A paste before the app has drawn waits as its text, and goes as one paste (between
//   bracketed-paste markers, as xterm.js sends a paste once the app has asked for them) in its
//   place among the keys: xterm.js sent it as keys, the app not having asked for the markers
//   yet, and each line break was an Enter (a 20-line email sent 19 questions; 200 KB froze the
//   session).
// - A click on the page beside the terminal (the strip its whole rows leave below and beside
//   them, "connecting…") leaves the keyboard in the terminal: it took it to the page's body, the
//   app drew itself inactive and the keys typed next were lost.
// - Once the session has ended, "Start again" has the keyboard, and the dead terminal none:
//   xterm.js keeps Tab for the terminal, so no key could reach the link.
(function () {
  "use strict";
  var OPEN = 1;
  var WAITING_KINDS = { stdin: true, focus: true, blur: true };
  var PASTE_START = "\u001b[200~";
  var PASTE_END = "\u001b[201~";
  // Before the app drew, in order: [socket, message] the terminal sent, or [null, text] pasted,
  // for the app's socket once it is known.
  var waiting = [];
  var socket = null; // The app's, once it has sent anything.
  var prototype = window.WebSocket.prototype;
  var send = prototype.send;

  function has(name) {
    return document.body !== null && document.body.classList.contains(name);
  }

  function started() {
    return has("-first-byte") || has("-closed");
  }

  function isTerminalInput(target) {
    return Boolean(
      target && target.classList && target.classList.contains("xterm-helper-textarea")
    );
  }

  function kind(message) {
    if (typeof message !== "string") {
      return null;
    }
    var found = /^\["(\w+)"/.exec(message);
    return found === null ? null : found[1];
  }

  function sendWaiting() {
    if (!has("-first-byte") || (socket === null && waiting.length > 0)) {
      return; // A paste: kept until the app's socket is known.
    }
    var messages = waiting;
    waiting = [];
    messages.forEach(function (entry) {
      if (entry[0] !== null) {
        if (entry[0].readyState === OPEN) {
          send.call(entry[0], entry[1]);
        }
      } else if (socket.readyState === OPEN) {
        // Through paste.js, which sends a long paste in pieces.
        socket.send(JSON.stringify(["stdin", entry[1]]));
      }
    });
  }

  prototype.send = function (message) {
    var sending = kind(message);
    if (sending !== null) {
      socket = this;
    }
    if (!has("-first-byte") && WAITING_KINDS[sending] === true) {
      waiting.push([this, message]);
      return;
    }
    sendWaiting();
    return send.call(this, message);
  };

  // A paste before the app has drawn: its text, held, goes as a paste.
  window.addEventListener(
    "paste",
    function (event) {
      var target = event.target;
      if (started() || !event.clipboardData) {
        return;
      }
      var control = target && target.closest && target.closest("a, button, input, select, textarea");
      if (control && !isTerminalInput(target)) {
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation(); // xterm.js would send it as keys.
      var text = event.clipboardData.getData("text/plain").replace(/\r?\n/g, "\r");
      if (text !== "") {
        waiting.push([null, PASTE_START + text + PASTE_END]);
      }
    },
    true
  );

  function terminalInput() {
    return document.querySelector("#terminal .xterm-helper-textarea");
  }

  function focusTerminal() {
    var input = terminalInput();
    if (input && !has("-closed") && document.activeElement !== input) {
      input.focus({ preventScroll: true });
    }
  }

  function ended() {
    var terminal = document.getElementById("terminal");
    if (terminal !== null) {
      terminal.inert = true;
    }
    var startAgain = document.querySelector(".closed-dialog a, .closed-dialog button");
    if (startAgain !== null) {
      startAgain.focus();
    }
  }

  window.addEventListener(
    "mousedown",
    function (event) {
      var terminal = document.querySelector("#terminal .xterm");
      var target = event.target;
      if (terminal === null || has("-closed") || terminal.contains(target)) {
        return;
      }
      if (target.closest && target.closest("a, button, input, select, textarea, [tabindex]")) {
        return;
      }
      event.preventDefault(); // The browser's own move of the keyboard to the body.
      focusTerminal();
    },
    true
  );

  // textual.js makes the terminal on load, in a handler set before this one.
  window.addEventListener("load", function () {
    var drawn = false;
    var closed = false;
    function update() {
      if (!drawn && has("-first-byte")) {
        drawn = true;
        sendWaiting();
        focusTerminal();
      }
      if (!closed && has("-closed")) {
        closed = true;
        waiting = [];
        ended();
      }
      return closed;
    }
    focusTerminal();
    if (update()) {
      return;
    }
    var watching = new MutationObserver(function () {
      if (update()) {
        watching.disconnect();
      }
    });
    watching.observe(document.body, { attributes: true, attributeFilter: ["class"] });
  });
})();
