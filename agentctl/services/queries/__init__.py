"""Reading what the store holds: the read models the commands show, and the reports and traces
built from the records.
"""
