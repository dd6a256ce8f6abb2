// Pastes, as on any page, of any length.
//
// - Ctrl+V pastes. xterm.js takes Ctrl+V for the key ^V and stops the browser's paste, so a
//   customer's Ctrl+V did nothing (Ctrl+Shift+V and the browser's menu worked). The key is kept
//   from xterm.js here, before it sees it; the browser then pastes into the terminal's input as
//   usual, and xterm.js sends that on as a paste. (Cmd+V on a Mac pastes already.)
// - A long paste goes in pieces. xterm.js sends a paste as one websocket message, and the server
//   takes none over 64 KiB: a paste of 70 KB closed the session ("This session has ended") and
//   the box's text was lost. Each piece here is at most PIECE characters, 48 KiB at six bytes a
//   character (a control character's JSON escape; any other is at most three in UTF-8); the
//   server puts a paste's pieces back together, and the box that gets it says if it is too long.
(function () {
  "use strict";
  var PIECE = 8192;
  var ESCAPE_ROOM = 32; // No piece ends inside a paste's markers or a short escape sequence.

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

  function pieces(text) {
    var found = [];
    var start = 0;
    while (text.length - start > PIECE) {
      var end = start + PIECE;
      var code = text.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) {
        end -= 1; // Never half of a character outside the Basic Multilingual Plane.
      }
      var escape = text.lastIndexOf("\u001b", end - 1);
      if (escape > start && end - escape <= ESCAPE_ROOM) {
        end = escape;
      }
      found.push(text.slice(start, end));
      start = end;
    }
    found.push(text.slice(start));
    return found;
  }

  var prototype = window.WebSocket.prototype;
  var send = prototype.send;
  prototype.send = function (message) {
    if (typeof message === "string" && message.length > PIECE && message.indexOf('["stdin",') === 0) {
      var keys = null;
      try {
        keys = JSON.parse(message);
      } catch (error) {
        keys = null;
      }
      if (keys !== null && keys.length === 2 && typeof keys[1] === "string") {
        var socket = this;
        pieces(keys[1]).forEach(function (piece) {
          send.call(socket, JSON.stringify(["stdin", piece]));
        });
        return;
      }
    }
    return send.call(this, message);
  };
})();
