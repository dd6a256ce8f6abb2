// The tab's title says when the app rings its bell. The agent console rings it, while the
// terminal has not the focus, for a customer who starts waiting or writes again; textual-serve's
// page has its xterm.js terminal to itself and sounds no bell, so an agent working in another
// tab heard nothing. Here every websocket the page opens is watched for the bell byte in the
// app's output, and the title gets a mark until the terminal has the focus again.
(function () {
  "use strict";
  var MARK = "\u25cf ";
  var NativeWebSocket = window.WebSocket;
  // Where the scan stands between messages: a string sequence (OSC, DCS, APC, PM, SOS) may end
  // with BEL, which is then no bell, and a sequence may be split across two messages.
  var NORMAL = 0, ESCAPE = 1, STRING = 2, STRING_ESCAPE = 3;
  var STRING_OPENERS = { 0x5d: true, 0x50: true, 0x5f: true, 0x5e: true, 0x58: true };

  function rings(bytes, state) {
    var bell = false;
    for (var i = 0; i < bytes.length; i++) {
      var byte = bytes[i];
      if (state.at === NORMAL) {
        if (byte === 0x1b) state.at = ESCAPE;
        else if (byte === 0x07) bell = true;
      } else if (state.at === ESCAPE) {
        state.at = STRING_OPENERS[byte] ? STRING : NORMAL;
      } else if (state.at === STRING) {
        if (byte === 0x07) state.at = NORMAL;
        else if (byte === 0x1b) state.at = STRING_ESCAPE;
      } else {
        state.at = byte === 0x5c ? NORMAL : STRING;
      }
    }
    return bell;
  }

  function inTerminal() {
    var terminal = document.getElementById("terminal");
    return document.hasFocus() && terminal !== null && terminal.contains(document.activeElement);
  }

  function mark() {
    // Only for someone away: the editor's bell on a bad key is for the person typing there.
    if (!inTerminal() && document.title.indexOf(MARK) !== 0) document.title = MARK + document.title;
  }

  function unmark() {
    if (document.title.indexOf(MARK) === 0) document.title = document.title.slice(MARK.length);
  }

  function Watched(url, protocols) {
    var socket =
      protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
    var state = { at: NORMAL };
    socket.addEventListener("message", function (event) {
      if (event.data instanceof ArrayBuffer && rings(new Uint8Array(event.data), state)) mark();
    });
    return socket;
  }
  Watched.prototype = NativeWebSocket.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (name) {
    Watched[name] = NativeWebSocket[name];
  });
  window.WebSocket = Watched;

  // Back in the terminal (a click, the tab shown again): the agent sees the queue for themself.
  document.addEventListener("focusin", function (event) {
    var terminal = document.getElementById("terminal");
    if (terminal && terminal.contains(event.target)) unmark();
  });
})();
