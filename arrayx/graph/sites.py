"""Call sites: where the user recorded a node whose primitive may fail on
values (Primitive.may_fail), and the error that names it.

Such an error (a singular matrix, an index out of bounds) can only surface
at the force point that computes the node, often lines or iterations later.
`graph.apply` keeps the site of each such node; the scheduler raises its
error as `located` makes it: the kernel's message with "(recorded at
file:line, in function)" and a note showing that line as a traceback does.
"""

import os
import sys
import traceback

# The package's directory as its code objects name their files (a frame of
# arrayx's own has a file under it).
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "")


def call_site():
    """The innermost frame outside arrayx that led to the caller's caller
    (graph.apply's caller), the user's call, as (code object, instruction
    offset); None when there is no such frame. The line is looked up only
    when an error names the site (`where`): a frame's line number costs a
    walk over its code's line table, which a call that never fails would
    pay for nothing."""
    frame = sys._getframe(2)
    while frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        if frame is None:
            return None
    return frame.f_code, frame.f_lasti


def where(site):
    """(file, line, function) of a site `call_site` gave."""
    code, offset = site
    line = next((n for start, end, n in code.co_lines() if start <= offset < end and n is not None),
                code.co_firstlineno)
    return code.co_filename, line, code.co_name


def describe(site):
    """'file.py:42, in step' of a site."""
    filename, line, function = where(site)
    return f"{os.path.basename(filename)}:{line}, in {function}"


def located(error, site):
    """A new error of `error`'s type (raised by a kernel on values): its
    message followed by "(recorded at <site>)", with a note showing the
    recording line as a traceback shows a frame. `error` itself, with the
    note, when its type takes no message alone."""
    message = f"{error} (recorded at {describe(site)})"
    try:
        new = type(error)(message)
    except TypeError:   # an error type with other required arguments: it keeps its message
        new = error
    filename, line, function = where(site)
    frame = traceback.format_list([traceback.FrameSummary(filename, line, function)])
    new.add_note("The call that recorded it:\n" + "".join(frame).rstrip("\n"))
    return new


def unraised_copy(error):
    """A copy of `error` (one `located` made) that a failed node can hold:
    the same type, message and notes, never raised, so no traceback keeps
    the frames of the force point (and the buffers they held) alive.
    `error` itself when its type takes no message alone."""
    try:
        copy = type(error)(*error.args)
    except TypeError:
        return error
    for note in getattr(error, "__notes__", ()):
        copy.add_note(note)
    return copy


def raised_again(error):
    """The error a later force point that needs a failed node raises: a
    copy of the one it holds (`unraised_copy`), with a note saying that
    nothing ran again."""
    again = unraised_copy(error)
    if again is not error:
        again.add_note("Its computation failed at an earlier force point; arrayx keeps that error and does not "
                       "compute the value again.")
    return again
