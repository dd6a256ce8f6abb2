"""A help-desk chatbot: answers from the passage Valen judges able to answer, or hands off."""

__version__ = "0.1.0"
