"""The person's own answers: shown on the booking's page, edited through its signed link
until the event starts (docs/orders.md#questions). Thin over the service: the edit is a
conditional write on the version the form was read at, so an edit made from a stale page
is refused (and says so), never written over a newer one."""
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from booking.errors import BookingClosed, StaleEdit
from booking.questions import rules
from booking.web import confirmation
from booking.entry.error_pages import renders_booking_errors
from booking.entry.forms import AnswersForm
from booking.web.middleware import plain_forms_only
from booking.web.views import see_other

STALE = ("Your answers were changed elsewhere since you opened this page, so your change was "
         "not saved. Here they are as they stand now: make your change again.")


@plain_forms_only
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@renders_booking_errors
def edit(request, event_id, token):
    opened = confirmation.open_link(request, event_id, token)
    if confirmation.is_response(opened):
        return opened
    service, event, ref, registration = opened
    if not ref.matches(registration):
        return render(request, "booking/booking_gone.html", {"event": event}, status=410)
    context = {"event": event, "registration": registration, "token": token}
    if event.has_started:
        raise BookingClosed("The event has started: the answers can no longer be changed.")
    stored = service.answers(registration)
    if request.method != "POST":
        form = AnswersForm(initial=AnswersForm.initial_from(stored), event=event,
                           registration=registration)
        return render(request, "booking/answers_edit.html", {**context, "form": form})
    form = AnswersForm(request.POST, event=event, registration=registration)
    status = 400
    if form.is_valid():
        try:
            service.edit_answers(registration, answers=form.answers(),
                                 pass_answers=form.pass_answers(),
                                 expected_version=form.cleaned_data["version"])
            return see_other(request.path + "?saved=1")
        except rules.InvalidAnswers as refused:
            form.apply_answer_errors(refused)
        except StaleEdit:
            form = AnswersForm(initial=AnswersForm.initial_from(service.answers(registration)),
                               event=event, registration=registration)
            return render(request, "booking/answers_edit.html",
                          {**context, "form": form, "stale": STALE}, status=409)
    return render(request, "booking/answers_edit.html", {**context, "form": form},
                  status=status)
