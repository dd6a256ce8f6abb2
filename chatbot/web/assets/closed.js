// The page that says a session has ended.
//
// - Why it ended: the server closes each websocket with a reason (signed out, the sign-in
//   expired, opened again in another tab, shutting down), and textual-serve's page said only
//   "This session has ended" for all of them. The sentences come translated in the closed
//   dialog's data attributes; the reason picks one, shown as text (never as markup).
// - A session whose app never drew anything sent nothing, so the page does not say "Everything
//   you sent is saved". One whose app process failed to start (the server says so) says the help
//   desk cannot open now, and offers to try again; it also tries again by itself a minute later,
//   as a full server's page does (one opened during a database outage stayed so after it).
// - "Start again" goes only to a server that answers: after a restart's SIGTERM the keyboard is
//   on it, and one Enter while the server was still down left the customer on the browser's
//   "cannot connect" page. It asks the server first; while it does not answer, the page stays,
//   says the help desk is restarting (or cannot reach its database, when the server says that
//   is why) and that it is connecting, asks again every few seconds, and goes once the server
//   answers.
// - A session ended by the server stopping (a restart) starts again by itself, the same way, a
//   few seconds later: customers left waiting for an agent stayed on this page, never seeing the
//   reply. Only that one: a page signed out, expired, ended by its user or replaced by another
//   tab waits for "Start again" (gone by itself, it would sign in again, or take the other tab's
//   session back).
(function () {
  "use strict";
  var REASONS = {
    "signed out": "signedOut",
    "session expired": "expired",
    "opened again": "openedAgain",
    "helpdesk is shutting down": "shuttingDown",
  };
  var FAILED_TO_START = "failed to start";
  var CHECK_URL = "/healthz"; // 200 whenever the server can serve, whatever its load; else 503.
  var CHECK_TIMEOUT_MS = 5000;
  var RETRY_MS = [1000, 2000, 3000, 5000]; // Then every 5 s, until it answers.
  var BY_ITSELF_MS = 60000; // A session that failed to start is tried again after a minute.
  // One ended by a restart asks after 2 to 5 s: the server is still stopping before then, and
  // the pages of its many sessions do not all ask at once (nor start again all at once).
  var RESTARTED_MS = 2000;
  var RESTARTED_SPREAD_MS = 3000;
  var DATABASE_OUT = "database unreachable"; // /healthz's reason while its database is out.
  var NativeWebSocket = window.WebSocket;
  var going = false;
  var leaving = false;

  function dialog() {
    return document.querySelector(".closed-dialog");
  }

  function part(selector) {
    var found = dialog();
    return found && found.querySelector(selector);
  }

  function say(selector, key) {
    var element = part(selector);
    var text = dialog() && dialog().dataset[key];
    if (!element || !text) return;
    element.textContent = text;
    element.hidden = false;
  }

  function explain(reason, drawn) {
    var saved = part(".saved");
    if (saved && (!drawn || reason === FAILED_TO_START)) {
      saved.hidden = true;
    }
    if (reason === FAILED_TO_START) {
      say(".ended", "failedToStart");
      say("a.button", "tryAgain");
      say(".why", "retrying");
      // Why, when the server knows: its database out (a new customer was told only "cannot
      // open now", where a returning one's page said why). Asked again a few times: the
      // server's look at its database may still be the one from before the outage.
      tellWhy(0);
      setTimeout(function () {
        go(part("a.button"));
      }, BY_ITSELF_MS);
      return;
    }
    var key = REASONS[reason];
    if (key) say(".why", key);
    if (key === "shuttingDown") {
      setTimeout(function () {
        go(part("a.button"));
      }, RESTARTED_MS + Math.random() * RESTARTED_SPREAD_MS);
    }
    // Signed out already (here, on another tab or server, or by a new password): a "Sign out"
    // beside "Start again" would offer what has just been done.
    var signOut = part("form.sign-out");
    if (key === "signedOut" && signOut) signOut.hidden = true;
  }

  function Explained(url, protocols) {
    var socket =
      protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
    socket.addEventListener("close", function (event) {
      // Before textual.js's own listener: the body is marked -closed after this.
      explain(event.reason, document.body.classList.contains("-first-byte"));
    });
    return socket;
  }
  Explained.prototype = NativeWebSocket.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (name) {
    Explained[name] = NativeWebSocket[name];
  });
  window.WebSocket = Explained;

  // Resolves to whether the server answers (a proxy's 502 for a server that is down is no), and
  // when not, the reason it gave.
  function answers() {
    var controller = new AbortController();
    var timer = setTimeout(function () {
      controller.abort();
    }, CHECK_TIMEOUT_MS);
    return fetch(CHECK_URL, { cache: "no-store", signal: controller.signal })
      .then(
        function (response) {
          if (response.ok) return { ok: true };
          return response.json().then(
            function (body) {
              return { ok: false, reason: body && body.reason };
            },
            function () {
              return { ok: false };
            }
          );
        },
        function () {
          return { ok: false };
        }
      )
      .then(function (answer) {
        clearTimeout(timer);
        return answer;
      });
  }

  function tellWhy(attempt) {
    answers().then(function (answer) {
      if (!answer.ok && answer.reason === DATABASE_OUT) {
        say(".why", "databaseOut");
      } else if (attempt < RETRY_MS.length) {
        setTimeout(function () {
          tellWhy(attempt + 1);
        }, RETRY_MS[attempt]);
      }
    });
  }

  function goWhenAnswering(link, attempt) {
    answers().then(function (answer) {
      if (leaving) return; // Signing out instead: going back in would cancel it.
      if (answer.ok) {
        window.location.assign(link.href);
        return;
      }
      say(".why", answer.reason === DATABASE_OUT ? "databaseOut" : "shuttingDown");
      if (attempt === 0) {
        say("a.button", "waiting"); // "help desk: connecting…"
        link.setAttribute("aria-busy", "true");
      }
      setTimeout(function () {
        goWhenAnswering(link, attempt + 1);
      }, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]);
    });
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    var link = target && target.closest && target.closest(".closed-dialog a[href]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) {
      return; // Not "Start again", or opened in a new tab or window: as the browser does it.
    }
    event.preventDefault();
    go(link);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form && form.closest && form.closest(".closed-dialog")) leaving = true; // "Sign out".
  });

  function go(link) {
    if (link && !going) {
      going = true;
      goWhenAnswering(link, 0);
    }
  }
})();
