"""Reading what the store holds: the read models the commands show, reports and traces built from the records."""
