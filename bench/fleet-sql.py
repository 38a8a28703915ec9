#!/usr/bin/env python3
"""The hosts of a fleet's Parquet table (`memsight fleet DIR --parquet FILE`) whose bandwidth
figures are 10% or more below their group's median, found with DuckDB as an analyst would.

    bench/fleet-sql.py FILE
"""
import sys

import duckdb

table = sys.argv[1].replace("'", "''")
rows = duckdb.sql(f"""
    WITH m AS (SELECT "group", key, conditions, median(value) AS med FROM '{table}'
               WHERE NOT disturbed AND suite = 'bandwidth' GROUP BY ALL)
    SELECT DISTINCT t.host FROM '{table}' t JOIN m USING ("group", key, conditions)
    WHERE NOT t.disturbed AND t.suite = 'bandwidth' AND t.value < 0.9 * m.med
    ORDER BY 1""").fetchall()
print(",".join(r[0] for r in rows) or "none")
