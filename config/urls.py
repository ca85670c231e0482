from django.contrib import admin
from django.urls import include, path

from booking.admin import dashboard as admin_dashboard
from booking.admin import login as admin_login
from booking.admin import views as admin_views
from booking.web import metrics as web_metrics

urlpatterns = [
    # Before the admin's own: events live in DynamoDB, not in a SQL table.
    path("admin/r/<int:content_type_id>/<path:object_id>/",
         admin.site.admin_view(admin_views.view_on_site), name="view_on_site"),
    path("admin/login/", admin_login.throttled_login),
    # The admin's home with the organizer's dashboard (docs/admin.md).
    path("admin/", admin.site.admin_view(admin_dashboard.index)),
    path("admin/", admin.site.urls),
    # The JSON API for integrators (docs/api.md).
    path("api/v1/", include("booking.api.urls")),
    # Prometheus; 404 unless METRICS_ENABLED, then allowed addresses or a token only.
    path("metrics", web_metrics.metrics, name="metrics"),
    path("", include("booking.web.urls")),
]

# Django's error views; under /api/ they answer problem+json (docs/api.md#errors).
handler400 = "booking.api.fallbacks.bad_request"
handler403 = "booking.api.fallbacks.permission_denied"
handler404 = "booking.api.fallbacks.page_not_found"
handler500 = "booking.api.fallbacks.server_error"
