// Why the session ended, on the page that says it has: the server closes each websocket with a
// reason (signed out, opened again in another tab, shutting down), and textual-serve's page said
// only "This session has ended" for all of them. The sentences come translated in the closed
// dialog's data attributes; the reason picks one, shown as text (never as markup).
(function () {
  "use strict";
  var REASONS = {
    "signed out": "signedOut",
    "opened again": "openedAgain",
    "helpdesk is shutting down": "shuttingDown",
  };
  var NativeWebSocket = window.WebSocket;

  function explain(reason) {
    var dialog = document.querySelector(".closed-dialog");
    var why = dialog && dialog.querySelector(".why");
    var key = REASONS[reason];
    if (!why || !key || !dialog.dataset[key]) return;
    why.textContent = dialog.dataset[key];
    why.hidden = false;
  }

  function Explained(url, protocols) {
    var socket =
      protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
    socket.addEventListener("close", function (event) {
      explain(event.reason);
    });
    return socket;
  }
  Explained.prototype = NativeWebSocket.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (name) {
    Explained[name] = NativeWebSocket[name];
  });
  window.WebSocket = Explained;
})();
