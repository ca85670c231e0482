// The signup form's per-pass questions: only the passes of the seats chosen are shown,
// each named by its ticket type, as the quantities change. Without this script every
// pass block is shown, to be left empty beyond the seats booked (the server checks the
// answers against the tickets either way).
for (const blocks of document.querySelectorAll("[data-pass-blocks]")) {
  const form = blocks.closest("form");
  const types = blocks.dataset.seatTypes.split("\n").filter(Boolean)
    .map((line) => line.split("="));
  const fieldsets = [...blocks.querySelectorAll("[data-pass]")];
  const quantity = (type) => {
    const input = form.querySelector(`[name="qty_${CSS.escape(type)}"]`);
    const n = input ? parseInt(input.value, 10) : 0;
    return Number.isFinite(n) && n > 0 ? n : 0;
  };
  const update = () => {
    const seats = [];
    for (const [type, label] of types) {
      for (let i = 0; i < quantity(type); i += 1) seats.push(label);
    }
    fieldsets.forEach((fieldset, index) => {
      const shown = index < Math.max(seats.length, 1);
      fieldset.hidden = !shown;
      for (const control of fieldset.querySelectorAll("input, select, textarea")) {
        control.disabled = !shown;  // a hidden pass sends nothing
      }
      const legend = fieldset.querySelector("legend");
      legend.textContent = `Pass ${index + 1}` + (seats[index] ? `: ${seats[index]}` : "");
    });
  };
  for (const hint of blocks.querySelectorAll("[data-when-script]")) hint.hidden = false;
  for (const hint of blocks.querySelectorAll("[data-no-script]")) hint.hidden = true;
  form.addEventListener("input", update);
  update();
}
