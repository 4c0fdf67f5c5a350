"""The workbench's persistence: one SQLite :class:`Store` holding imported sessions and, through
its :attr:`Store.replays` repository, saved replays with their evidence. Nothing outside this
package touches the database connection or writes SQL."""
