"""E-mails whose HTML shows images attached to the message itself (``<img src="cid:…">``):
a pass's QR code must show on a phone at the door without loading anything.

The message is ``multipart/mixed`` (further attachments, e.g. the calendar file) holding a
``multipart/alternative`` of the plain text and a ``multipart/related`` of the HTML with
its images (RFC 2387), which is where mail clients look for ``cid:`` parts. Django builds
the alternative part in ``EmailMultiAlternatives._create_alternatives``; this subclass
wraps its HTML part (the last alternative) with the images, and leaves everything else
to Django.
"""
from email.mime.image import MIMEImage

from django.core.mail import EmailMultiAlternatives
from django.core.mail.message import SafeMIMEMultipart


class InlineImage:
    """A PNG image shown in the HTML by ``cid:<content_id>``."""

    def __init__(self, content_id: str, png: bytes, filename: str):
        self.content_id, self.png, self.filename = content_id, png, filename

    def mime(self) -> MIMEImage:
        part = MIMEImage(self.png, "png")
        part["Content-ID"] = f"<{self.content_id}>"
        part.add_header("Content-Disposition", "inline", filename=self.filename)
        return part


class EmailWithInlineImages(EmailMultiAlternatives):
    """``EmailMultiAlternatives`` plus ``inline_images`` (``InlineImage``) for its HTML."""

    def __init__(self, *args, inline_images=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.inline_images = list(inline_images)

    def _create_alternatives(self, msg):  # Django's own step for the HTML part
        msg = super()._create_alternatives(msg)  # type: ignore[misc]  # not in the stubs
        if not self.inline_images or not self.alternatives:
            return msg
        parts = msg.get_payload()
        related = SafeMIMEMultipart(_subtype="related", encoding=self.encoding)
        related.attach(parts[-1])  # the HTML alternative
        for image in self.inline_images:
            related.attach(image.mime())
        parts[-1] = related
        return msg
