{% load static %}// The scanner page's service worker (scope /checkin/): the page opens again without a
// connection (reloaded, or reopened after the phone closed the tab). Network first: online,
// everything comes from the site as usual and the copies kept here are refreshed; offline,
// the last copy of the scanner page and its scripts answers. Scans themselves are never
// cached or replayed here: the page keeps its own queue (static/booking/checkin.js).
"use strict";
const CACHE = "checkin-scanner-v1";
const ASSETS = [
  "{% static 'booking/site.css' %}",
  "{% static 'booking/checkin.css' %}",
  "{% static 'booking/checkin.js' %}",
  "{% static 'booking/vendor/jsqr-1.4.0/jsQR.js' %}",
];
const SCANNER_PAGE = /^\/checkin\/[^/]+\/$/;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(ASSETS)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  const page = request.mode === "navigate" && SCANNER_PAGE.test(url.pathname);
  if (!page && !ASSETS.includes(url.pathname)) return;
  event.respondWith(fetch(request).then((response) => {
    if (response.ok && !response.redirected) {
      const copy = response.clone();
      caches.open(CACHE).then((cache) => cache.put(request, copy));
    }
    return response;
  }).catch(() => caches.match(request, {ignoreSearch: true, ignoreVary: true}).then((kept) => kept || Response.error())));
});
