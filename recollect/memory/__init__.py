"""The engine under the nodes: Postgres, migrations, models and the memory stores."""
