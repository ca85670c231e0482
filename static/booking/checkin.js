// The check-in scanner page (templates/booking/checkin/scanner.html, docs/checkin.md).
//
// A code comes from the camera (jsQR, vendored), the code field or a name search. Its
// Ed25519 signature is checked here with the event's public key (WebCrypto), so a forged,
// altered or other event's code is refused even without a connection. Online, the server
// decides (one conditional write: the truth). Offline, or when the answer is lost, the
// scan is kept in this browser's localStorage with its nonce and time, answered from what
// this phone has seen, and uploaded to the list's batch endpoint when the connection is
// back; the server decides the queue in time order and reports double admissions as
// conflicts. A scan's nonce never changes, so sending it again can never count it twice.
"use strict";

(() => {
  const config = JSON.parse(document.getElementById("checkin-config").textContent);
  const csrfToken = document.querySelector('meta[name="csrf-token"]').content;
  const texts = config.texts;
  const $ = (id) => document.getElementById(id);
  const REQUEST_TIMEOUT_MS = 8000;
  const SAME_CODE_PAUSE_MS = 2500; // the camera ignores the code it just answered
  const GREEN_SHOWN_MS = 2500; // a green answer clears itself; a red one waits for a tap
  const UPLOAD_EVERY_MS = 10000;
  const ROSTER_EVERY_MS = 5 * 60 * 1000;

  // --- this phone's memory (per list) ------------------------------------------------
  const key = (name) => `checkin:${config.listId}:${name}`;
  const load = (name, fallback) => {
    try {
      const value = JSON.parse(localStorage.getItem(key(name)));
      return value === null ? fallback : value;
    } catch (error) {
      return fallback;
    }
  };
  const save = (name, value) => localStorage.setItem(key(name), JSON.stringify(value));
  let queue = load("queue", []); // scans not yet decided by the server, oldest first
  let seen = load("seen", {}); // pass id -> {inside, at, gate}: what this phone knows

  function remember(passId, inside, at, gate) {
    if (!passId) return;
    seen[passId] = {inside, at, gate};
    save("seen", seen);
  }

  // --- short codes: "917B-981D-2" (a pass) or "917B-981D" (its booking) -----------------
  // Looked up, never read from the text: in the list's roster (kept on this phone, read
  // from the server when the page opens and every few minutes), else by the server.
  let roster = load("roster", []); // [{short_code, code, name, ticket_label, status}]
  function shortOf(text) {
    const found = /^([0-9A-F]{4})-?([0-9A-F]{4})(?:-?([1-9][0-9]{0,3}))?$/.exec(text.replace(/\s+/g, "").toUpperCase());
    return found ? {ref: `${found[1]}-${found[2]}`, seat: found[3] || null} : null;
  }
  function inRoster(short) {
    return roster.filter((entry) => short.seat === null
      ? entry.short_code.startsWith(short.ref + "-") : entry.short_code === `${short.ref}-${short.seat}`);
  }
  async function refreshRoster() {
    if (!navigator.onLine) return;
    try {
      const response = await fetch(config.rosterUrl, {credentials: "same-origin"});
      if (!response.ok) return;
      roster = (await response.json()).passes || [];
      save("roster", roster);
    } catch (error) {
      // offline meanwhile: the roster kept stays
    }
  }

  // --- codes: "BP1." + b64url(payload) + "." + b64url(Ed25519 signature) --------------
  function unb64url(text) {
    if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error("not base64url");
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  function parse(code) {
    if (typeof code !== "string" || code.length > 400 || !code.startsWith("BP1.")) return null;
    const parts = code.slice(4).split(".");
    if (parts.length !== 2) return null;
    try {
      const payload = new TextDecoder("utf-8", {fatal: true}).decode(unb64url(parts[0]));
      const signature = unb64url(parts[1]);
      const fields = payload.split(".");
      if (signature.length !== 64 || fields.length !== 3) return null;
      return {eventId: fields[0], passId: fields[1], ticketType: fields[2], signature,
              signed: new TextEncoder().encode("BP1." + parts[0])};
    } catch (error) {
      return null;
    }
  }

  // The event's keys: the signing one, then those of secrets being rotated out.
  let publicKeys = null; // a promise of the imported keys (rejected: this browser cannot)
  function eventKeys() {
    if (publicKeys === null) {
      publicKeys = (window.crypto && crypto.subtle)
        ? Promise.all(config.publicKeys.map((raw) => crypto.subtle.importKey("raw", unb64url(raw), {name: "Ed25519"}, false, ["verify"])))
        : Promise.reject(new Error("no WebCrypto"));
    }
    return publicKeys;
  }

  // What this phone can tell by itself: {ok, ref} or {ok: false, reason}.
  async function checkLocally(code) {
    const ref = parse(code);
    if (ref === null) return {ok: false, reason: "forged"};
    let keys;
    try {
      keys = await eventKeys();
    } catch (error) {
      return {ok: false, reason: "cannot_check", ref};
    }
    let valid = false;
    for (const key of keys) {
      valid = valid || await crypto.subtle.verify({name: "Ed25519"}, key, ref.signature, ref.signed);
    }
    if (!valid) {
      // A real code of another event is signed with that event's key.
      return {ok: false, reason: ref.eventId === config.eventId ? "forged" : "other_event"};
    }
    if (ref.eventId !== config.eventId) return {ok: false, reason: "other_event"};
    if (config.ticketTypes !== null && !config.ticketTypes.includes(ref.ticketType)) {
      return {ok: false, reason: "not_on_list", ref};
    }
    return {ok: true, ref};
  }

  // --- the answer, full screen ---------------------------------------------------------
  const answer = $("answer");
  let answerTimer = null;
  let busy = false; // a code is being decided or its answer is on screen
  let lastCode = null;
  let pauseUntil = 0;

  function clock(iso) {
    if (!iso) return "";
    const options = {hour: "2-digit", minute: "2-digit", timeZoneName: "short"};
    try {
      return new Date(iso).toLocaleTimeString([], {...options, timeZone: config.timeZone || undefined});
    } catch (error) {
      return new Date(iso).toLocaleTimeString([], options); // a zone this browser does not know
    }
  }

  function show({good, status, why, who}) {
    answer.className = "answer " + (good ? "is-good" : "is-bad");
    answer.dataset.status = status;
    $("answer-title").textContent = config.titles[status] || status;
    $("answer-why").textContent = why;
    $("answer-who").textContent = who || "";
    answer.hidden = false;
    document.body.classList.add("answer-open");
    $("answer-next").focus();
    clearTimeout(answerTimer);
    if (good) answerTimer = setTimeout(dismiss, GREEN_SHOWN_MS);
  }

  function dismiss() {
    clearTimeout(answerTimer);
    answer.hidden = true;
    document.body.classList.remove("answer-open");
    pauseUntil = Date.now() + SAME_CODE_PAUSE_MS;
    busy = false;
  }
  $("answer-next").addEventListener("click", dismiss);
  answer.addEventListener("click", (event) => { if (event.target === answer) dismiss(); });

  function who(result) {
    return [result.name, result.ticket_label].filter(Boolean).join(" · ");
  }

  function serverAnswer(result) {
    let why = result.accepted ? "" : result.message; // green: the big word says it all
    if (result.status === "already_admitted" && result.first_admitted_at) {
      why += ` First at ${clock(result.first_admitted_at)}` + (result.first_gate ? `, ${result.first_gate}.` : ".");
    }
    show({good: result.accepted, status: result.status, why, who: who(result)});
  }

  // --- deciding a code -----------------------------------------------------------------
  const direction = () => document.querySelector('input[name="direction"]:checked').value;
  const gate = () => $("gate-input").value.trim() || null;

  // The server's clock as last seen (its Date header), so an offline scan's time is the
  // server's time even when this phone's clock is off.
  let clockOffset = Number(localStorage.getItem("checkin:clock-offset")) || 0;
  const serverNow = () => new Date(Date.now() + clockOffset);
  function learnClock(response) {
    const said = Date.parse(response.headers.get("Date") || "");
    if (!Number.isNaN(said)) {
      clockOffset = said - Date.now();
      localStorage.setItem("checkin:clock-offset", String(clockOffset));
    }
    return response;
  }

  async function post(url, body) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
    try {
      return learnClock(await fetch(url, {
        method: "POST", credentials: "same-origin", signal: controller.signal,
        headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken},
        body: JSON.stringify(body),
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  async function decide(code) {
    if (busy) return;
    busy = true;
    lastCode = code;
    try {
      await decideNow(code);
    } catch (error) {
      show({good: false, status: "error", why: texts.failed});
    }
  }

  // A booking reference of several passes: its passes to pick from (under "Find a name").
  function choose(choices, name) {
    const people = $("people");
    people.replaceChildren();
    const item = document.createElement("li");
    item.className = "person";
    const heading = document.createElement("p");
    heading.className = "person-name";
    heading.textContent = `${name ? name + ": " : ""}${texts.choose_pass}`;
    item.append(heading);
    for (const choice of choices) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "person-pass";
      button.textContent = `${choice.ticket_label} · ${choice.short_code}` + (choice.status === "cancelled" ? " (cancelled)" : "");
      button.addEventListener("click", () => decide(choice.code));
      item.append(button);
    }
    people.append(item);
    item.querySelector("button").focus();
  }

  async function decideNow(code) {
    const short = shortOf(code);
    if (short !== null) {
      const found = inRoster(short);
      if (found.length > 1) {
        busy = false;
        choose(found, found[0].name);
        return;
      }
      if (found.length === 1) {
        code = found[0].code;
      } else if (!navigator.onLine) {
        show({good: false, status: "unknown_code", why: texts.short_unknown});
        return;
      } else {
        await decideShortOnline(code);
        return;
      }
    }
    const check = await checkLocally(code);
    if (!check.ok && check.reason !== "cannot_check") {
      const status = check.reason === "not_on_list" ? "not_on_list" : "unknown_code";
      show({good: false, status, why: texts[check.reason] || texts[status]});
      return;
    }
    const scan = {code, direction: direction(), nonce: crypto.randomUUID(),
                  scanned_at: serverNow().toISOString(), gate: gate()};
    if (navigator.onLine) {
      let response = null;
      try {
        response = await post(config.scanUrl, scan);
      } catch (error) {
        response = null; // no answer (offline, timed out): keep the scan, same nonce
      }
      if (response !== null && response.ok) {
        const result = await response.json();
        const inside = result.status === "admitted" || result.status === "already_admitted";
        if (result.accepted || result.status === "already_admitted") {
          remember(result.pass_id, inside, result.first_admitted_at || scan.scanned_at, result.first_gate || scan.gate);
        }
        serverAnswer(result);
        refreshCounts();
        return;
      }
      if (response !== null && response.status < 500 && response.status !== 408 && response.status !== 429) {
        const body = await response.json().catch(() => ({}));
        show({good: false, status: "error", why: body.error || `Error ${response.status}`});
        return;
      }
    }
    if (!check.ok) {
      show({good: false, status: "error", why: texts.cannot_check});
      return;
    }
    decideOffline(check.ref, scan);
  }

  // A short code this phone's roster does not hold: only the server can look it up.
  async function decideShortOnline(code) {
    const scan = {code, direction: direction(), nonce: crypto.randomUUID(), gate: gate()};
    let response = null;
    try {
      response = await post(config.scanUrl, scan);
    } catch (error) {
      response = null;
    }
    if (response === null || !response.ok) {
      show({good: false, status: "error", why: texts.failed});
      return;
    }
    const result = await response.json();
    if (result.status === "choose_pass") {
      busy = false;
      choose(result.choices, result.name);
      return;
    }
    if (result.accepted || result.status === "already_admitted") {
      remember(result.pass_id, result.status !== "exited", result.first_admitted_at || serverNow().toISOString(), result.first_gate || scan.gate);
    }
    serverAnswer(result);
    refreshCounts();
  }

  function decideOffline(ref, scan) {
    const before = seen[ref.passId];
    const label = config.ticketLabels[ref.ticketType] || ref.ticketType;
    if (scan.direction === "entry" && before && (before.inside || !config.allowReentry)) {
      const where = before.gate ? `, ${before.gate}` : "";
      show({good: false, status: "already_admitted",
            why: `${texts.already_admitted_here} First at ${clock(before.at)}${where}.`, who: label});
      return;
    }
    queue.push(scan);
    save("queue", queue);
    remember(ref.passId, scan.direction === "entry", scan.scanned_at, scan.gate);
    showQueue();
    const status = scan.direction === "entry" ? "admitted" : "exited";
    show({good: true, status, why: texts[`${status}_offline`], who: label});
  }

  // --- the offline queue ---------------------------------------------------------------
  let uploading = false;

  function showQueue() {
    const waiting = queue.length;
    $("queue").hidden = waiting === 0;
    $("queue").textContent = waiting === 1 ? "1 scan waiting to be sent" : `${waiting} scans waiting to be sent`;
  }

  // The queue in parts the server takes: at most ``maxBatch`` scans and
  // ``maxBatchBytes`` of JSON each (a code is ~200 bytes, a gate up to 180).
  const bytes = (value) => new TextEncoder().encode(JSON.stringify(value)).length;
  function parts(scans) {
    const found = [];
    let part = [];
    let size = bytes({scans: []});
    for (const scan of scans) {
      const more = bytes(scan) + 1;
      if (part.length && (part.length >= config.maxBatch || size + more > config.maxBatchBytes)) {
        found.push(part);
        part = [];
        size = bytes({scans: []});
      }
      part.push(scan);
      size += more;
    }
    if (part.length) found.push(part);
    return found;
  }

  // Sends ``part``: {results, refused}, or null to try again later (no connection, busy).
  // A part answered 413 (too large for a proxy on the way) is sent again in halves; one
  // refused as bad input (400) scan by scan, so one bad scan (a time the server will not
  // take) cannot hold up the others.
  async function send(part) {
    const response = await post(config.batchUrl, {scans: part});
    if (response.ok) return {results: (await response.json()).results, refused: []};
    if (response.status !== 400 && response.status !== 413) return null; // try again later
    if (part.length === 1) {
      const body = await response.json().catch(() => ({}));
      return {results: [], refused: [{scan: part[0], error: body.error || body.detail || `Error ${response.status}`}]};
    }
    const pieces = response.status === 413
      ? [part.slice(0, Math.ceil(part.length / 2)), part.slice(Math.ceil(part.length / 2))]
      : part.map((scan) => [scan]);
    return sendAll(pieces);
  }

  async function sendAll(pieces) {
    const all = {results: [], refused: []};
    for (const piece of pieces) {
      const one = await send(piece);
      if (one === null) return all.results.length || all.refused.length ? all : null;
      all.results.push(...one.results);
      all.refused.push(...one.refused);
    }
    return all;
  }

  async function upload() {
    if (uploading || queue.length === 0 || !navigator.onLine) return;
    uploading = true;
    try {
      const sent = await sendAll(parts(queue.slice()));
      if (sent === null) return;
      const {results, refused} = sent;
      const done = new Set([...results.map((r) => r.nonce), ...refused.map((r) => r.scan.nonce)]);
      queue = queue.filter((scan) => !done.has(scan.nonce)); // scans queued meanwhile stay
      save("queue", queue);
      for (const result of results) {
        if (result.status === "admitted") remember(result.pass_id, true, result.first_admitted_at, result.first_gate);
      }
      const answered = results.filter((result) => !result.accepted); // conflicts among them
      const notes = answered.map((result) => `${result.name || result.ticket_label || "A pass"}: ${result.message}` +
        (result.first_gate ? ` First at ${result.first_gate}` : "") + (result.first_admitted_at ? ` ${clock(result.first_admitted_at)}.` : ""));
      for (const {scan, error} of refused) {
        notes.push(`A scan made at ${clock(scan.scanned_at)} was not accepted: ${error}`);
      }
      const count = results.length + refused.length;
      const head = count === 1 ? "1 offline scan sent" : `${count} offline scans sent`;
      $("synced").textContent = notes.length ? `${head}. Reported: ${notes.join(" ")}` : `${head}.`;
      $("synced").hidden = false;
      refreshCounts();
    } catch (error) {
      // Still no connection: the queue stays and is sent on the next try.
    } finally {
      uploading = false;
      showQueue();
    }
  }

  // --- connection, counts ---------------------------------------------------------------
  function showNetwork() {
    const online = navigator.onLine;
    $("network").textContent = online ? "Online" : "Offline";
    $("network").className = "network " + (online ? "is-online" : "is-offline");
    $("name-note").hidden = online;
    $("name-note").textContent = online ? "" : "Finding a name needs a connection.";
    if (online) upload();
  }
  window.addEventListener("online", showNetwork);
  window.addEventListener("offline", showNetwork);

  async function refreshCounts() {
    if (!navigator.onLine) {
      const last = load("counts", null); // offline: the last counts seen, with their time
      if (last) $("counts").textContent = `${last.text} (at ${clock(last.at)})`;
      return;
    }
    try {
      const response = await fetch(config.countsUrl, {credentials: "same-origin"});
      if (!response.ok) return;
      const counts = await response.json();
      const limit = counts.occupancy_limit === null ? "" : ` (limit ${counts.occupancy_limit})`;
      const text = `Inside ${counts.inside}${limit} · admitted ${counts.admitted} of ${counts.expected}` +
        (counts.conflicts ? ` · ${counts.conflicts} conflict${counts.conflicts === 1 ? "" : "s"}` : "");
      $("counts").textContent = text;
      save("counts", {text, at: new Date().toISOString()});
    } catch (error) {
      // offline meanwhile
    }
  }

  // --- typed codes and names -----------------------------------------------------------
  $("code-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("code-input").value.trim();
    if (code) {
      $("code-input").value = "";
      decide(code);
    }
  });

  $("name-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const people = $("people");
    people.replaceChildren();
    const query = $("name-input").value.trim();
    if (query.length < 2 || !navigator.onLine) return;
    try {
      const response = await fetch(`${config.searchUrl}?q=${encodeURIComponent(query)}`, {credentials: "same-origin"});
      const found = (await response.json()).people || [];
      if (found.length === 0) {
        const none = document.createElement("li");
        none.textContent = "Nobody found.";
        people.append(none);
      }
      for (const person of found) {
        const item = document.createElement("li");
        item.className = "person";
        const name = document.createElement("p");
        name.className = "person-name";
        name.textContent = person.name;
        item.append(name);
        for (const pass of person.passes) {
          const button = document.createElement("button");
          button.type = "button";
          button.className = "person-pass";
          const state = pass.status === "cancelled" ? " (cancelled)"
            : pass.admitted_at ? ` (in since ${clock(pass.admitted_at)})` : "";
          button.textContent = `${pass.ticket_label}${state}`;
          if (state) button.classList.add("is-used"); // asking again answers why not
          button.addEventListener("click", () => decide(pass.code));
          item.append(button);
        }
        people.append(item);
      }
    } catch (error) {
      $("name-note").hidden = false;
      $("name-note").textContent = "Finding a name needs a connection.";
    }
  });

  const gateInput = $("gate-input");
  gateInput.value = localStorage.getItem("checkin:gate") || "Door";
  $("gate-shown").textContent = gateInput.value;
  gateInput.addEventListener("input", () => {
    localStorage.setItem("checkin:gate", gateInput.value.trim());
    $("gate-shown").textContent = gateInput.value.trim();
  });

  // --- the camera ----------------------------------------------------------------------
  const video = $("camera-video");
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", {willReadFrequently: true});
  let stream = null;

  function look() {
    if (stream === null) return;
    if (!busy && video.readyState >= 2 && video.videoWidth > 0) {
      const scale = Math.min(1, 640 / video.videoWidth);
      canvas.width = Math.round(video.videoWidth * scale);
      canvas.height = Math.round(video.videoHeight * scale);
      context.drawImage(video, 0, 0, canvas.width, canvas.height);
      const image = context.getImageData(0, 0, canvas.width, canvas.height);
      const found = window.jsQR(image.data, image.width, image.height, {inversionAttempts: "attemptBoth"});
      if (found && found.data && !(found.data === lastCode && Date.now() < pauseUntil)) {
        decide(found.data);
      }
    }
    setTimeout(look, 150);
  }

  async function startCamera() {
    const note = $("camera-note");
    try {
      stream = await navigator.mediaDevices.getUserMedia({audio: false, video: {facingMode: "environment"}});
    } catch (error) {
      note.textContent = "The camera is not available here: type the code or find the name instead.";
      note.hidden = false;
      return;
    }
    note.hidden = true;
    video.srcObject = stream;
    video.hidden = false;
    await video.play();
    $("camera-toggle").textContent = "Stop camera";
    look();
  }

  function stopCamera() {
    for (const track of stream.getTracks()) track.stop();
    stream = null;
    video.hidden = true;
    $("camera-toggle").textContent = "Scan with camera";
  }

  $("camera-toggle").addEventListener("click", () => (stream === null ? startCamera() : stopCamera()));

  // Opens again without a connection (templates/booking/checkin/worker.js): keep this
  // page's own copy too, since the worker starts after the page's first load.
  if ("serviceWorker" in navigator && "caches" in window) {
    navigator.serviceWorker.register(config.workerUrl, {scope: "/checkin/"})
      .then(() => navigator.onLine && caches.open("checkin-scanner-v1").then((cache) => cache.add(location.pathname)))
      .catch(() => { /* no worker: the page still works while it stays open */ });
  }

  showQueue();
  showNetwork();
  refreshCounts();
  refreshRoster();
  setInterval(() => { upload(); refreshCounts(); }, UPLOAD_EVERY_MS);
  setInterval(refreshRoster, ROSTER_EVERY_MS);
})();
