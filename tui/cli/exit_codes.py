"""Exit statuses, as monitoring plugins (Nagios, Icinga) define them."""

OK = 0
WARNING = 1
CRITICAL = 2
UNREADABLE = 3
