from pathlib import Path

from django.core.management.base import BaseCommand

from booking.deploy.template import TEMPLATE_PATH, render
from booking.wiring import project_dir


class Command(BaseCommand):
    help = ("Write the AWS CloudFormation template (tables, the streams decider Lambda, IAM "
            f"roles, alarms) generated from booking/dynamo/tables.py to {TEMPLATE_PATH}.")

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", default=None,
                            help=f"Where to write it (default: {TEMPLATE_PATH}; - for stdout).")
        parser.add_argument("--check", action="store_true",
                            help="Write nothing; exit 1 if the file differs from the output.")

    def handle(self, *args, output, check, **options):
        text = render()
        if output == "-":
            self.stdout.write(text, ending="")
            return
        path = Path(output) if output else project_dir() / TEMPLATE_PATH
        if check:
            if not path.exists() or path.read_text() != text:
                self.stderr.write(f"{path} is not what manage.py aws_template writes: "
                                  "run it and commit the result.")
                raise SystemExit(1)
            self.stdout.write(f"{path}: up to date")
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.stdout.write(f"{path}: written")
