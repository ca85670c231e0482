// The printable passes' "Print" button (shown only when scripts run; the browser's own
// Print menu works as well).
for (const button of document.querySelectorAll("[data-print]")) {
  button.hidden = false;
  button.addEventListener("click", () => window.print());
}
