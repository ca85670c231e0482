from django.urls import path

from booking.web import answers, booking_page, cancel, checkin, passes, views, waitlist

app_name = "booking"

urlpatterns = [
    path("", views.event_list, name="event_list"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("events/<str:event_id>/", views.event_detail, name="event_detail"),
    path("events/<str:event_id>/booked/<str:token>/", views.booked, name="booked"),
    path("events/<str:event_id>/booked/<str:token>/passes/", passes.printable,
         name="passes"),
    path("events/<str:event_id>/answers/<str:token>/", answers.edit, name="answers"),
    path("events/<str:event_id>/calendar.ics", views.event_ics, name="event_ics"),
    path("events/<str:event_id>/resend/", views.resend, name="resend"),
    path("cancel/<str:token>/", cancel.cancel, name="cancel"),
    path("cancel/<str:token>/done/", cancel.cancelled, name="cancelled"),
    # A booking's own page, by the same sealed token (booking/web/booking_page.py).
    path("bookings/<str:token>/", booking_page.booking, name="booking"),
    path("bookings/<str:token>/resend/", booking_page.resend, name="booking_resend"),
    # The waiting list (booking/web/waitlist.py).
    path("events/<str:event_id>/waiting-list/", waitlist.join, name="waitlist_join"),
    path("offers/<str:token>/", waitlist.offer, name="offer"),
    path("waiting-list/confirm/<str:token>/", waitlist.confirm, name="waitlist_confirm"),
    path("waiting-list/<str:token>/", waitlist.place, name="waitlist_place"),
    # The scanner page for door staff (booking/web/checkin.py).
    path("checkin/", checkin.pick, name="checkin"),
    path("checkin/worker.js", checkin.worker, name="checkin_worker"),
    path("checkin/<str:list_id>/", checkin.scanner, name="checkin_scanner"),
    path("checkin/<str:list_id>/scan/", checkin.scan, name="checkin_scan"),
    path("checkin/<str:list_id>/batch/", checkin.batch, name="checkin_batch"),
    path("checkin/<str:list_id>/search/", checkin.search, name="checkin_search"),
    path("checkin/<str:list_id>/counts/", checkin.counts, name="checkin_counts"),
    path("checkin/<str:list_id>/roster/", checkin.roster, name="checkin_roster"),
]
