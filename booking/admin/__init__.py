"""Django admin for events: permissions and URLs from Django, data from DynamoDB."""
from functools import partial, update_wrapper

from django.contrib import admin
from django.urls import path

from booking.admin import checkin as admin_checkin
from booking.admin import access_codes as admin_access_codes
from booking.admin import questions as admin_questions
from booking.admin import attendees as admin_attendees
from booking.admin import registrations as admin_registrations
from booking.admin import views as admin_views
from booking.admin import waitlist as admin_waitlist
from booking.admin.views import rights_of
from booking.models import DynamoEvent
from booking.organizers import rights


@admin.register(DynamoEvent)
class EventAdmin(admin.ModelAdmin):
    """Every page calls the BookingService; nothing reads the (nonexistent) SQL table."""

    list_per_page = 25

    # What the user may do comes from their teams (booking/organizers/rights.py), never
    # from Django's model permissions; each event page checks the event itself.
    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_view_permission(self, request, obj=None):
        return not rights_of(request).scope(rights.VIEW).is_empty

    def has_change_permission(self, request, obj=None):
        return not rights_of(request).scope(rights.CHANGE).is_empty

    def has_delete_permission(self, request, obj=None):
        return not rights_of(request).scope(rights.DELETE).is_empty

    def has_add_permission(self, request):
        return rights_of(request).organizers(rights.CREATE) != frozenset()

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}"

        def route(pattern, view, suffix):
            bound = update_wrapper(partial(view, self), view)
            return path(pattern, self.admin_site.admin_view(bound), name=f"{name}_{suffix}")

        return [
            route("", admin_views.changelist, "changelist"),
            route("add/", admin_views.add, "add"),
            route("<str:event_id>/change/", admin_views.change, "change"),
            route("<str:event_id>/delete/", admin_views.delete, "delete"),
            route("<str:event_id>/registrations/", admin_registrations.registrations,
                  "registrations"),
            route("<str:event_id>/registrations/export/", admin_registrations.export, "export"),
            route("<str:event_id>/registrations/add/", admin_attendees.add_attendee,
                  "add_attendee"),
            route("<str:event_id>/waiting-list/", admin_waitlist.waiting_list, "waiting_list"),
            route("<str:event_id>/checkin/", admin_checkin.checkin, "checkin"),
            route("<str:event_id>/checkin/export/", admin_checkin.export, "checkin_export"),
            route("<str:event_id>/access-codes/", admin_access_codes.access_codes,
                  "access_codes"),
            route("<str:event_id>/access-codes/export/", admin_access_codes.export,
                  "access_codes_export"),
            route("<str:event_id>/questions/", admin_questions.questions, "questions"),
        ]
from booking.admin import webhooks as admin_webhooks  # noqa: E402,F401 - registers its admin
