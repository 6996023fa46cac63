"""A scheduled task may keep how its runs are to be made (`bot.vocabulary.run_config.RunConfig`: an
output schema, a mode, a model), as JSON beside it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as tasks:
        tasks.add_column(sa.Column("run_config", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tasks") as tasks:
        tasks.drop_column("run_config")
