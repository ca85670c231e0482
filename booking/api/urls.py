from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from booking.api import access_codes, checkin, questions, views, waitlist, webhooks

app_name = "api"

urlpatterns = [
    path("events/", views.EventList.as_view(), name="events"),
    path("events/<str:event_id>/", views.EventDetail.as_view(), name="event"),
    path("events/<str:event_id>/registrations/", views.EventRegistrations.as_view(),
         name="registrations"),
    path("events/<str:event_id>/registrations/export/", views.RegistrationsExport.as_view(),
         name="registrations_export"),
    path("events/<str:event_id>/access-codes/", access_codes.AccessCodes.as_view(),
         name="access_codes"),
    path("registrations/<str:secret>/", views.RegistrationBySecret.as_view(),
         name="registration"),
    path("events/<str:event_id>/questions/", questions.EventQuestions.as_view(),
         name="questions"),
    path("registrations/<str:secret>/answers/", questions.RegistrationAnswers.as_view(),
         name="answers"),
    path("registrations/<str:secret>/cancellations/", views.RegistrationCancellations.as_view(),
         name="registration_cancellations"),
    path("events/<str:event_id>/waiting-list/", waitlist.WaitingList.as_view(),
         name="waiting_list"),
    path("offers/<str:secret>/", waitlist.Offer.as_view(), name="offer"),
    path("offers/<str:secret>/accept/", waitlist.OfferAccept.as_view(), name="offer_accept"),
    path("webhooks/", webhooks.WebhookList.as_view(), name="webhooks"),
    path("webhooks/<str:endpoint_id>/", webhooks.WebhookDetail.as_view(), name="webhook"),
    path("webhooks/<str:endpoint_id>/deliveries/", webhooks.WebhookDeliveries.as_view(),
         name="webhook_deliveries"),
    path("events/<str:event_id>/checkin-lists/", checkin.EventCheckinLists.as_view(),
         name="checkin_lists"),
    path("checkin-lists/<str:list_id>/", checkin.CheckinListDetail.as_view(),
         name="checkin_list"),
    path("checkin-lists/<str:list_id>/scans/", checkin.Scans.as_view(), name="checkin_scans"),
    path("checkin-lists/<str:list_id>/scans/batch/", checkin.ScanBatch.as_view(),
         name="checkin_scans_batch"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
]
