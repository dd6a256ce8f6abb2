// The terminal takes the keyboard as soon as the app has drawn. textual-serve's page leaves it
// unfocused until a click: what a customer typed on arrival was lost, the app drew itself
// inactive (no key footer) and its question box had no cursor. Focusing the terminal's input
// also tells the app it has the focus, as a click would.
(function () {
  "use strict";
  function focusTerminal() {
    var input = document.querySelector("#terminal .xterm-helper-textarea");
    if (input && document.activeElement !== input) {
      input.focus({ preventScroll: true });
    }
  }
  function whenDrawn() {
    if (document.body.classList.contains("-first-byte")) {
      focusTerminal();
      return true;
    }
    return false;
  }
  window.addEventListener("load", function () {
    if (whenDrawn()) {
      return;
    }
    var watching = new MutationObserver(function () {
      if (whenDrawn()) {
        watching.disconnect();
      }
    });
    watching.observe(document.body, { attributes: true, attributeFilter: ["class"] });
  });
})();
