"""Every Redis key, channel and job name Parley uses, in one place.

The names are part of the data: a worker that is upgraded while messages, leases and approvals
wait in Redis must still find them, so a name here never changes once released. Everything
lives under `parley:`, so Parley can share a Redis with other programs (arq's own keys are
`arq:…`).

Shared by every worker:

- `parley:armed`: sorted set of sessions with work queued, scored by when they were armed or
  last woken; the sweep scans it.
- `parley:worker:{id}`: one worker's liveness key, kept alive with a short TTL; a lease whose
  token names a worker whose key is gone is freed by the sweep.
- `parley:workers`: capped stream with an entry (liveness id, host, pid) per worker start,
  added when the worker is about to take jobs; whoever waits for a worker reads it.
- `parley:sweeper`: set for the sweep interval by the worker that sweeps, so one sweeps.
- `parley:dead`: list of envelopes given up on (dead letters), newest first.
- `parley:dead:count`: how many envelopes were ever given up on (the list keeps the newest
  only), for `/metrics`.
- `parley:cancel`: pub/sub channel; a message is a session whose running turn must stop.
- `parley:rate:{scope}`: one token bucket of the shared rate budget.
- `parley:confirm:{id}`: one approval record (JSON) that waits for a person's decision (or,
  for `ask_user`, their answers).
- `parley:confirm:{id}:reminded`: set by the one worker that reminds the person of it.
- `parley:tasks`: pub/sub channel; a message is the id of a scheduled task that was added,
  cancelled or changed, for the scheduler to apply.
- `parley:mcp:{host}:{pid}:{nonce}`: hash of one worker's MCP servers and how each is doing (JSON
  per server name), with a TTL that the worker keeps refreshing while it runs.
- `parley:metrics:{host}:{pid}:{nonce}`: one process's Prometheus metrics (the text exposition
  format), rewritten every few seconds with a TTL, so a gone process's lapse.
- `parley:shared:{name}`: the mark of the directory (`files`, `workspaces`, `database`) the
  processes share, as the first of them found it, with a TTL its users refresh
  (`bot.files.shared_dirs`).
- `parley:limit:{person}:messages`: sorted set of the person's messages accepted in the last
  minute (member: the message's key, score: when, in ms of Redis time).
- `parley:limit:{person}:tokens:{YYYY-MM-DD}`: hash of the person's token use that UTC day:
  `tokens` (the total) and `turn:{envelope id}` per turn counted, so a turn counts once.
- `parley:limit:{person}:told:{what}`: the person was told they are over a limit
  (`messages`, `tokens:{YYYY-MM-DD}`); it lapses when they may write again.
- `parley:task:{id}:tokens:{YYYY-MM-DD}`: hash of a scheduled task's token use that UTC day:
  `tokens` (the total) and `run:{envelope id}` per run counted, so a run counts once
  (`bot.tasks.spend`); with a TTL of two days.
- `parley:task:{id}:told:{YYYY-MM-DD}`: the task's chat was told it reached its daily cap, so
  it is told once that day; with the same TTL.
- `parley:chat:{chat}:activation`: a chat's activation (`mention`, `always`, or `default`
  for none set), read through from SQL for the web process's every group message, with a TTL;
  whoever changes it in SQL writes it here after.
- `parley:chat:{chat}:heard`: list of the latest messages in a group or channel that were not
  addressed to the bot (JSON each: who, text), at most PARLEY_GROUP_CONTEXT, with a TTL; the
  next turn there takes them.
- `parley:chat:{chat}:burst`: how many messages not addressed to the bot the chat had in the
  current minute, while it answers every message (`always`), with a TTL of that minute.
- `parley:{pair}:code:{sha256}`: a pairing code waiting for an admin (JSON: who asked, where
  to tell them), by its code's SHA-256, with the code's lifetime as its TTL.
- `parley:{pair}:asked:{account}:{person}`: the code a stranger was given (to give them the
  same one again), with the same TTL; `{account}` is the bot's platform account.
- `parley:{pair}:pending:{account}`: sorted set of the account's waiting codes' hashes,
  scored by when each expires (ms), so that at most a few wait at once.
- `parley:{pair}:asks:{account}:{person}`: how often a stranger asked this window.
- `parley:{pair}:wrong` and `parley:{pair}:wrong:{person}`: wrong codes tried this window,
  overall and by one admin (`cli` for the command line).
- `parley:run:{run id}`: the session of a run while it is queued or runs, whose
  `run:{run id}` key shows it (`bot.redis.live_runs`), with the same TTL.
- `parley:scheduler`: the leader lease of the scheduler that runs the tasks (its token); the
  other schedulers wait until it is free.

Per session, all under the hash tag `{session}` so one script touches one slot
(`parley:{session}:{name}`):

- `inbox`: list of the envelopes waiting, oldest first.
- `seen:{envelope id}`: dedup marker, so a platform's redelivery is dropped.
- `armed`: the generation of the session's pending drain job, while it is armed.
- `gen`: counter of generations.
- `lease`: the token of the worker running the session (`fence:worker:nonce`).
- `fence`: counter that numbers lease tokens.
- `state`: the agent's state between turns (JSON), but its context, which is in `context`;
  led by a marker `{"cold": …}` when the context's older messages are in SQL.
- `context`: list of the context's recent messages (JSON each), oldest first; a long
  context's older turns are in SQL (`bot.session.states`).
- `saved`: the version of the state last written, so its writer knows its copy is current.
- `attempts:{envelope id}`: how often a worker tried the envelope (survives crashes).
- `options`: hash of per-session settings chosen by a person (e.g. `model`).
- `events`: stream of a turn's events for the HTTP API; the last 15 minutes' are kept.
- `asking`: the id of the confirmation the session last asked for, for the API's listing.
- `run:{run id}`: a run of the session while it is queued or runs (JSON: its summary, state and
  trace so far, as `GET /api/traces/{id}` shows it), rewritten as it goes, with a TTL of a
  turn's time; dropped once the run's record is written (`bot.redis.live_runs`).

Per platform (`tg`, `slack`, `http`):

- `parley:{platform}:reply:{envelope id}`: the message ids of a reply, so a resumed turn edits
  them instead of posting again.
- `parley:{platform}:reply-files:{envelope id}`: hash of the files a reply posted (SHA-256 →
  the message's id), so a resumed turn does not post one again.
- `parley:{platform}:prompt:{confirmation id}`: where an approval prompt was posted.
- `parley:tg:refused:{user id}`, `parley:slack:refused:{team}:{user}`: a stranger was told
  once that the bot is not theirs.
- `parley:tg:reaction:{envelope id}`: where the 👀 on a queued message stands (`setting`,
  `set`, `failed`, `done`) while the web process sets it and the worker takes it away.
- `parley:slack:thread:{session}`: the bot takes part in this thread (no mention needed).
- `parley:slack:assistant:{session}`: hash of an assistant thread: the channel the person
  looks at beside it (`viewing`), and whether it was given its title (`titled`).
- `parley:slack:stop:{session}`: the reply whose Stop button shows in the session, while its
  turn runs (JSON: its first envelope's id, the person asked, the button's ts).
- `parley:http:session:{id}`: an HTTP session's owner and creation time.
- `parley:web:{instance}:wake`: a web process's own stream, written to wake its reader.
- `parley:embedding`: the worker embedding the memories the model has not (`worker.loops`),
  let go after its pass.
- `parley:digest:{scope}:{day}`: a worker writes that scope's digest of that day
  (`bot.memory.digest`); set once, with a TTL, so two workers never both write it.

The arq job `drain` (`WAKE_SESSION_JOB`, run by `worker.jobs.wake_session`) wakes a worker
for a session; its id (`drain:{session}:{generation}`) lets arq drop a second wake-up for the
same generation. The arq job `expire_confirmation` (`EXPIRY_JOB`), deferred to a
confirmation's expiry, expires it if nobody decided; `remind_confirmation` (`REMIND_JOB`),
deferred to a while before it, reminds the person once. Every new wake-up job's id is also
published on `parley:jobs` (`JOBS_CHANNEL`): workers with room start it at once instead of at
their next poll of arq's queue, which stays the backstop for a publication nobody heard.
"""

from __future__ import annotations

PREFIX = "parley"
ARMED_SET = f"{PREFIX}:armed"
WORKER_PREFIX = f"{PREFIX}:worker:"
SWEEPER = f"{PREFIX}:sweeper"
DEAD_LETTERS = f"{PREFIX}:dead"
DEAD_LETTER_COUNT = f"{PREFIX}:dead:count"
CANCEL_CHANNEL = f"{PREFIX}:cancel"
JOBS_CHANNEL = f"{PREFIX}:jobs"
READY_STREAM = f"{PREFIX}:workers"
TASKS_CHANNEL = f"{PREFIX}:tasks"
SCHEDULER_LEADER = f"{PREFIX}:scheduler"
MCP_STATUS_PREFIX = f"{PREFIX}:mcp:"
MCP_STATUS_MATCH = f"{MCP_STATUS_PREFIX}*"
METRICS_PREFIX = f"{PREFIX}:metrics:"
METRICS_MATCH = f"{METRICS_PREFIX}*"
DIGEST_CLAIM_PREFIX = f"{PREFIX}:digest:"
EMBEDDING_CLAIM = f"{PREFIX}:embedding"
# What every session key starts with; the sweep's script builds lease keys from it.
SESSION_PREFIX = f"{PREFIX}:"

# The wake-up job's name on the wire is still `drain`: jobs queued by an older version run.
WAKE_SESSION_JOB = "drain"
EXPIRY_JOB = "expire_confirmation"
REMIND_JOB = "remind_confirmation"


def wake_job_id(session: str, generation: int) -> str:
    return f"{wake_job_prefix(session)}{generation}"


def wake_job_prefix(session: str) -> str:
    """A session's drain job ids before their generation."""
    return f"{WAKE_SESSION_JOB}:{session}:"


def session(session_id: str, name: str) -> str:
    """Keys of one session share a hash tag, so its scripts touch a single slot."""
    return f"{SESSION_PREFIX}{{{session_id}}}:{name}"


def events(session_id: str) -> str:
    """The stream of a session's turn events, read by the web process (the HTTP API)."""
    return session(session_id, "events")


def worker(worker_id: str) -> str:
    return f"{WORKER_PREFIX}{worker_id}"


def mcp_status(instance: str) -> str:
    """One worker's MCP servers; `instance`: `bot.redis.instance`, unique across hosts."""
    return f"{MCP_STATUS_PREFIX}{instance}"


def metrics(instance: str) -> str:
    """One process's metrics; `instance`: `bot.redis.instance`, unique across hosts."""
    return f"{METRICS_PREFIX}{instance}"


def shared_dir(name: str) -> str:
    return f"{PREFIX}:shared:{name}"


def rate(scope: str) -> str:
    return f"{PREFIX}:rate:{scope}"


def confirmation(confirmation_id: str) -> str:
    return f"{PREFIX}:confirm:{confirmation_id}"


def reminded(confirmation_id: str) -> str:
    """Set once by the worker that sends the reminder, so only one sends it."""
    return f"{PREFIX}:confirm:{confirmation_id}:reminded"


def asking(session_id: str) -> str:
    """The confirmation a session last asked for (the API lists it while it waits)."""
    return session(session_id, "asking")


def reply(platform: str, envelope_id: str) -> str:
    return f"{PREFIX}:{platform}:reply:{envelope_id}"


def reply_files(platform: str, envelope_id: str) -> str:
    return f"{PREFIX}:{platform}:reply-files:{envelope_id}"


def prompt(platform: str, confirmation_id: str) -> str:
    return f"{PREFIX}:{platform}:prompt:{confirmation_id}"


def refused(sender: str, scope: str = "") -> str:
    """`sender` is platform-prefixed (`tg:42`); `scope` narrows it (a Slack workspace)."""
    platform, _, user = sender.partition(":")
    return f"{PREFIX}:{platform}:refused:{scope + ':' if scope else ''}{user}"


def slack_thread(session: str) -> str:
    return f"{PREFIX}:slack:thread:{session}"


def tg_reaction(envelope_id: str) -> str:
    return f"{PREFIX}:tg:reaction:{envelope_id}"


def slack_assistant(session: str) -> str:
    return f"{PREFIX}:slack:assistant:{session}"


def slack_stop(session: str) -> str:
    return f"{PREFIX}:slack:stop:{session}"


def http_session(session_id: str) -> str:
    return f"{PREFIX}:http:session:{session_id}"


def live_run(run_id: str) -> str:
    return f"{PREFIX}:run:{run_id}"


def agent_run(digest: str) -> str:
    """The run an API request started, while it runs: identical requests follow it."""
    return f"{PREFIX}:http:run:{digest}"


def web_wake(instance: str) -> str:
    return f"{PREFIX}:web:{instance}:wake"


def limit(person: str, name: str) -> str:
    """`person` is platform-prefixed (`tg:42`); `name` is `messages`, `tokens:{day}` or
    `told:{what}`."""
    return f"{PREFIX}:limit:{person}:{name}"


def task_tokens(task_id: int, day: str) -> str:
    """`day` is a UTC date, `YYYY-MM-DD`."""
    return f"{PREFIX}:task:{task_id}:tokens:{day}"


def task_told(task_id: int, day: str) -> str:
    return f"{PREFIX}:task:{task_id}:told:{day}"


def chat_activation(chat: str) -> str:
    return f"{PREFIX}:chat:{chat}:activation"


def chat_burst(chat: str) -> str:
    return f"{PREFIX}:chat:{chat}:burst"


def group_context(chat: str) -> str:
    return f"{PREFIX}:chat:{chat}:heard"


def pairing(name: str) -> str:
    """A pairing key (`bot.redis.pairing_codes`); all share one hash tag, so one script may
    touch any of them."""
    return f"{PREFIX}:{{pair}}:{name}"
