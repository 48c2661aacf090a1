// Re-fetch this page every data-refresh seconds and swap in its #stats
// element. The server escapes everything it renders; nothing here builds
// HTML from strings.
(function () {
  "use strict";
  var every = Number(document.body.dataset.refresh) || 0;
  var pause = document.getElementById("pause");
  var status = document.getElementById("refresh-status");
  if (every <= 0 || !pause) {
    return;
  }
  var paused = false;
  pause.hidden = false;
  pause.addEventListener("click", function () {
    paused = !paused;
    pause.textContent = paused ? "Resume" : "Pause";
  });
  function schedule() {
    setTimeout(refresh, every * 1000);
  }
  function refresh() {
    if (paused || document.hidden) {
      schedule();
      return;
    }
    fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (res) {
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        return res.text();
      })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html").getElementById("stats");
        if (!next) {
          throw new Error("no #stats in the answer");
        }
        document.getElementById("stats").replaceWith(document.adoptNode(next));
        status.textContent = "";
        status.classList.remove("stale");
      })
      .catch(function (err) {
        status.textContent = "Refresh failed (" + err.message + "); the figures below are older.";
        status.classList.add("stale");
      })
      .finally(schedule);
  }
  schedule();
})();
