"""`POST /hooks/<intake-id>/`: a plain Django view. Senders authenticate by signature, not by
session, so CSRF does not apply."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from boards.messages import task_data
from common.errors import Invalid, KandevError
from common.validation import whole_number
from integrations.intake import MAX_BODY_BYTES, BodyTooLarge, deliver
from integrations.models import Intake


@csrf_exempt
@require_POST
def hook(request: HttpRequest, intake_id):
    intake = Intake.objects.select_related("workflow", "step", "created_by").filter(pk=intake_id).first()
    if intake is None:
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    header = request.headers.get("Content-Length")
    announced = whole_number(header or "0")
    try:
        if announced is None:  # before request.body, which would int() it and crash
            raise Invalid({"Content-Length": ["Must be a whole number of bytes."]})
        # Refuse by the announced length before reading (and buffering) the body.
        if announced > MAX_BODY_BYTES:
            raise BodyTooLarge(f"The body exceeds {MAX_BODY_BYTES} bytes.")
        delivery = deliver(intake=intake, body=request.body, signature=request.headers.get("X-Hub-Signature-256"))
    except KandevError as error:
        return JsonResponse(error.as_body(), status=error.status_code)
    if delivery.task is None:
        return JsonResponse(delivery.error.as_body(), status=delivery.status)
    if delivery.known:
        return JsonResponse({"id": str(delivery.task.pk), "status": "known"}, status=200)
    return JsonResponse(task_data(delivery.task), status=delivery.status)
