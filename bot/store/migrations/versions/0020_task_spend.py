"""A scheduled task's own daily token cap, and whether it is a quiet check-in.

`tokens_per_day` caps the tokens a task's runs may spend in a UTC day, within the
deployment's PARLEY_TASK_TOKENS_PER_DAY (NULL: the deployment's cap alone). `quiet` marks a
check-in (`/checkin`): its runs post only when the model has something to say. Tasks made
before keep NULL and false: they run as they did.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-09
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("tokens_per_day", sa.Integer(), nullable=True))
    op.add_column(
        "tasks", sa.Column("quiet", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    # in place on both (SQLite 3.35+), as the columns are in no index
    op.execute("ALTER TABLE tasks DROP COLUMN quiet")
    op.execute("ALTER TABLE tasks DROP COLUMN tokens_per_day")
