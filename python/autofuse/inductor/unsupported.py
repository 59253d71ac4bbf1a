"""Unsupported: what the Inductor frontend cannot express as AscIR, with the reason."""


class Unsupported(Exception):
    """A loop body the AscIR kernels cannot express; the message is the reason the group stays
    with Inductor's C++ backend (explain shows it)."""
