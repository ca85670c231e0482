"""The API's one body parser: DRF's JSON parser, with JSON nested deeper than Python's
parser can follow refused as malformed (400 ``parse-error``) instead of a server error."""
from rest_framework import exceptions, parsers

TOO_DEEP = "JSON parse error - nested too deeply."


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:  # ``[[[[...`` a thousand deep: the C parser's own limit
            raise exceptions.ParseError(TOO_DEEP) from None
