"""The lab: recorded runs replayed with a candidate configuration, to compare before a switch.

`evaluations` starts one (the runs chosen, the replays planned in lanes, their envelopes
submitted through the mailbox like any message) and reports it; `replays` prepares each
replay as a worker takes it (the conversation before it, the recorded calls that answer
those that change things, the candidate's instructions), or skips it.
"""
