"""Corpus evaluation: many sessions replayed under one or more configurations into tidy tables.

:mod:`workbench.corpus.tables` is the unit (one session under one configuration -> five tables,
with their column types); :mod:`workbench.corpus.batch` runs many of them in-process, on a process
pool or on Dask and writes Parquet. Both need the ``[corpus]`` extra (pyarrow, DuckDB); this
package imports neither, so ``workbench batch`` can say which extra is missing in one line.
"""
