// Touch screens, as on any chat page.
//
// - A vertical swipe scrolls what is under the finger. xterm.js hands touches to the page while
//   the app takes mouse input (as a Textual app always does), and the page had nothing to scroll:
//   a phone's customer could never read back past the screen. A swipe is sent here as the mouse
//   wheel the app knows, at the cell where the finger went down: one wheel step per
//   LINES_PER_STEP rows the finger moved, about a line per row (Textual scrolls two lines a
//   step). A swipe is no tap: its touch end is cancelled, so the browser clicks nothing.
// - After a tap the app is told the pointer left. A tap reaches the app as a mouse moved to the
//   cell, pressed and released, and nothing moves the pointer away after: the hover style and
//   tooltip stayed on what was tapped (or slid under it). The mouse then moves to the cell past
//   the app's last row and column, where Textual finds no widget and clears both. Mice keep
//   their hover.
(function () {
  "use strict";
  var LINES_PER_STEP = 2; // Textual's App.scroll_sensitivity_y, which this app keeps.
  var TOUCH_MOUSE_MS = 1000; // The browser's mouse events for a tap come within this.
  var socket = null; // The app's, once the terminal has sent anything.
  var size = null; // The terminal's {width, height} in cells, as last sent to the app.
  var touch = null; // The finger on the terminal: where it went down, the height scrolled to.
  var touchEnded = -Infinity;

  var prototype = window.WebSocket.prototype;
  var send = prototype.send;
  prototype.send = function (message) {
    var found = typeof message === "string" && /^\["(stdin|resize)",/.exec(message);
    if (found) {
      socket = this;
      if (found[1] === "resize") {
        try {
          size = JSON.parse(message)[1];
        } catch (error) {
          size = null;
        }
      }
    }
    return send.call(this, message);
  };

  // The terminal's screen under a touch, while the app takes mouse input (before then, xterm.js
  // would send a wheel as arrow keys).
  function screen(target) {
    var terminal = target && target.closest ? target.closest("#terminal .xterm") : null;
    if (terminal === null || !terminal.classList.contains("enable-mouse-events")) {
      return null;
    }
    return terminal.querySelector(".xterm-screen");
  }

  function pointerLeft() {
    if (socket === null || socket.readyState !== 1 || size === null) {
      return;
    }
    // SGR mouse report: a move (35) with no button held, 1-based cell just past the app.
    var away = "\u001b[<35;" + (size.width + 1) + ";" + (size.height + 1) + "M";
    socket.send(JSON.stringify(["stdin", away]));
  }

  window.addEventListener(
    "touchstart",
    function (event) {
      var found = event.touches.length === 1 ? screen(event.target) : null;
      var finger = event.touches[0];
      touch = found === null ? null : {
        screen: found, x: finger.clientX, y: finger.clientY, sentY: finger.clientY, swiped: false
      };
    },
    { capture: true, passive: true }
  );

  window.addEventListener(
    "touchmove",
    function (event) {
      if (touch === null) {
        return;
      }
      if (event.touches.length !== 1) {
        touch = null; // Two fingers: the browser's pinch, not a swipe.
        return;
      }
      if (event.cancelable) {
        event.preventDefault(); // The page itself never pans under a swipe.
      }
      var rows = size === null ? 0 : size.height;
      var box = touch.screen.getBoundingClientRect();
      if (rows <= 0 || box.height <= 0) {
        return;
      }
      var row = box.height / rows;
      var y = event.touches[0].clientY;
      if (Math.abs(y - touch.y) >= row / 2) {
        touch.swiped = true; // Moved off the cell it went down on: no longer a tap.
      }
      var step = LINES_PER_STEP * row;
      var steps = Math.trunc((y - touch.sentY) / step);
      for (var i = 0; i < Math.abs(steps); i++) {
        // A finger moving down brings what is above into view: the wheel turned up.
        touch.screen.dispatchEvent(
          new WheelEvent("wheel", {
            bubbles: true,
            cancelable: true,
            clientX: touch.x,
            clientY: touch.y,
            deltaMode: WheelEvent.DOM_DELTA_LINE,
            deltaY: steps > 0 ? -1 : 1
          })
        );
      }
      touch.sentY += steps * step;
    },
    { capture: true, passive: false }
  );

  window.addEventListener(
    "touchend",
    function (event) {
      if (touch === null) {
        return;
      }
      var swiped = touch.swiped;
      touch = null;
      if (swiped) {
        if (event.cancelable) {
          event.preventDefault(); // No click where the swipe ended.
        }
        pointerLeft();
      } else {
        touchEnded = Date.now();
      }
    },
    { capture: true, passive: false }
  );

  window.addEventListener(
    "touchcancel",
    function () {
      touch = null;
    },
    { capture: true, passive: true }
  );

  // A tap's mouse events come after its touch end; xterm.js reports the release to the app in
  // its own handler, after this one, so the pointer leaves once they all have run.
  window.addEventListener(
    "mouseup",
    function () {
      if (Date.now() - touchEnded < TOUCH_MOUSE_MS) {
        touchEnded = -Infinity;
        setTimeout(pointerLeft, 0);
      }
    },
    true
  );
})();
