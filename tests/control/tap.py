"""The "ok - ..." / "not ok - ..." lines every tests/control script prints,
with a "# ..." line of detail for each failure, and their count."""
import sys

passed = 0
failed = 0


def check(desc, cond, detail=""):
    global failed, passed
    if cond:
        passed += 1
        print(f"ok - {desc}")
    else:
        failed += 1
        print(f"not ok - {desc}")
        for line in str(detail).splitlines():
            print(f"# {line}")
    sys.stdout.flush()


def summary():
    """The closing count; the script's exit status (1 when any failed)."""
    print(f"# {passed} passed, {failed} failed")
    return 1 if failed else 0
