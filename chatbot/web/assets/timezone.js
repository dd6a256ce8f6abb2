// The app inside shows times (a transcript's, the gaps') in local time, but it runs on the server,
// whose time zone is not the reader's: an agent in Shanghai read a UTC server's clock. The page
// tells the server its time zone in a cookie, sent with the session's websocket, before the app
// starts; the server passes it on only if it is a zone it knows.
(function () {
  "use strict";
  var zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (error) {
    return;
  }
  if (!zone) {
    return;
  }
  var secure = window.location.protocol === "https:" ? "; Secure" : "";
  document.cookie =
    "helpdesk-tz=" + encodeURIComponent(zone) + "; path=/; SameSite=Strict; max-age=31536000" + secure;
})();
