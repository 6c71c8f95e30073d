from django.core.management.base import BaseCommand

from boards.attachments import sweep_orphans


class Command(BaseCommand):
    help = "Remove attachment files that no attachment names (left by a crash), older than an hour."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="list them, remove nothing")

    def handle(self, *args, dry_run=False, **options):
        names = sweep_orphans(dry_run=dry_run)
        for name in names:
            self.stdout.write(name)
        verb = "would remove" if dry_run else "removed"
        self.stdout.write(f"{verb} {len(names)} orphaned attachment files")
