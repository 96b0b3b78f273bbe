// A running tournament's page, kept up to date: the server pushes the live part of the
// page (status, progress, standings, crosstable, matches) as server-sent events when the
// store shows a change (arena/web/live.py), and this puts it in place. Without
// JavaScript the page is the same, as of when it was loaded.
"use strict";
(function () {
  var live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource) {
    return;
  }
  var source = new EventSource(live.dataset.events);
  source.addEventListener("tournament", function (event) {
    // the server rendered it from the store, every stored text escaped, as the page
    live.innerHTML = JSON.parse(event.data).html;
  });
  source.addEventListener("end", function () {
    source.close(); // finished or stopped: nothing more will change
  });
})();
