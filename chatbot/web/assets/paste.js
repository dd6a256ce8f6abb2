// Ctrl+V pastes, as on any page. xterm.js takes Ctrl+V for the key ^V and stops the browser's
// paste, so a customer's Ctrl+V did nothing (Ctrl+Shift+V and the browser's menu worked). The
// key is kept from xterm.js here, before it sees it; the browser then pastes into the terminal's
// input as usual, and xterm.js sends that on as a paste. (Cmd+V on a Mac pastes already.)
(function () {
  "use strict";
  window.addEventListener(
    "keydown",
    function (event) {
      var target = event.target;
      if (
        event.ctrlKey && !event.metaKey && !event.altKey && !event.shiftKey &&
        (event.key === "v" || event.key === "V") &&
        target && target.classList && target.classList.contains("xterm-helper-textarea")
      ) {
        event.stopPropagation();
      }
    },
    true
  );
})();
