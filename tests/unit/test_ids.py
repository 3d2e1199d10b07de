"""Prefixed ULIDs: Crockford base32 of (milliseconds << 80 | random), monotonic in a process."""

from __future__ import annotations

from agentctl.domain import ids

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def reference(value: int) -> str:
    """The 26 digits of a 130-bit number, five bits at a time, most significant first."""
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def test_ulid_is_the_crockford_digits_of_its_time_and_random_parts() -> None:
    for _ in range(2000):
        made = ids.ulid()
        assert made == reference((ids._last_ms << 80) | ids._last_random)


def test_ulids_sort_in_the_order_they_were_made_even_when_the_random_part_overflows() -> None:
    made = [ids.ulid() for _ in range(5000)]
    ids._last_random = (1 << 80) - 1  # the next id in this millisecond carries into the time
    made += [ids.ulid() for _ in range(5)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    assert all(len(u) == 26 and set(u) <= set(CROCKFORD) for u in made)


def test_ids_counting_up_across_a_digit_pair_boundary_spell_their_number() -> None:
    """Within a millisecond only the last digit pair is respelt, until the count carries."""
    for start in ((5 << 10) + 1020, (1 << 70) - 3, (7 << 20) - 2):
        ids.ulid()
        ids._last_random = start
        for _ in range(8):
            made = ids.ulid()
            assert made == reference((ids._last_ms << 80) | ids._last_random)
