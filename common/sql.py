"""Hand-written SQL for the few statements every request runs, written once from the models.

Profiling an admission (bench/profile.py) showed Django's query compiler costing more CPU
than everything else the request does; under the GIL that CPU is what caps admissions per
second. The statements stay derived from the models' metadata (tables, columns, database
converters), so a renamed column cannot drift from them. On PostgreSQL each is prepared once
per connection (`_execute`): parsing and planning them was the database's larger share.
"""

import functools
import hashlib
import itertools
import re
import weakref

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import UUIDField


def quote(name: str) -> str:
    return connection.ops.quote_name(name)


def columns(model, alias: str | None = None) -> str:
    """The select list of a model's concrete fields, in `fetch()`'s order."""
    prefix = f"{quote(alias)}." if alias else ""
    return ", ".join(prefix + quote(f.column) for f in model._meta.concrete_fields)


def column(model, name: str) -> str:
    return quote(model._meta.get_field(name).column)


def table(model) -> str:
    return quote(model._meta.db_table)


def condition(model, q) -> str:
    """A constant filter (`Q` without parameters) as SQL, compiled by the ORM: a rule such as
    "a live task" stays spelt once, in the model's module."""
    query = model.objects.filter(q).query
    where, params = query.where.as_sql(query.get_compiler(connection=connection), connection)
    if params:
        raise ValueError(f"{q} compiles to parameters; pass them as the statement's own")
    return where


_UUID = UUIDField()


def uuid_param(value):
    """A UUID as this database takes it as a parameter (SQLite: hex text)."""
    return _UUID.get_db_prep_value(value, connection)


def uuid_value(value):
    """A UUID as read from this database (SQLite: hex text)."""
    return _UUID.to_python(value)


@functools.cache
def _loaders(model, vendor: str) -> tuple[list[str], list]:
    """Attribute names and, for fields whose database values need converting (JSON; on
    SQLite also UUIDs, booleans, timestamps), the converters the ORM's compiler applies."""
    names, convert = [], []
    for index, field in enumerate(model._meta.concrete_fields):
        names.append(field.attname)
        col = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
        if converters:
            convert.append((index, col, converters))
    return names, convert


def fetch(sql: str, params: list, *models) -> list[tuple]:
    """Rows of `sql`, whose select list is `columns()` of each model in turn and then any
    extra values: one tuple per row of an instance per model, then the extras as read."""
    (rows,) = fetch_together((sql, params, models))
    return rows


def fetch_together(*queries) -> list[list[tuple] | None]:
    """`fetch()` of each `(sql, params, models)` in turn, sent together (`models` None: a
    write, whose result is None). On PostgreSQL they go as one query string (psycopg's
    client-side binding, Django's default, sends it by the simple protocol): one send and
    one wait, not one of each per statement. Under load every wait hands the GIL to another
    thread for up to its switch interval, so a statement's wait costs far more than its
    round trip. The server still runs each statement after the one before (a lock order
    holds), and the first error stops the rest. No queries: nothing is sent."""
    if not queries:
        return []
    # Server-side binding (an OPTIONS choice kandev does not make) takes one statement a query.
    db = connections[DEFAULT_DB_ALIAS]  # once: each use of the `connection` proxy looks it up
    together = db.vendor == "postgresql" and not db.settings_dict["OPTIONS"].get("server_side_binding")
    results = []
    with db.cursor() as cursor:
        if together:
            for _ in range(_execute(db, cursor, queries)):
                cursor.nextset()  # past a PREPARE's result
        for index, (sql, params, models) in enumerate(queries):
            if not together:
                cursor.execute(sql, params)
            elif index:
                cursor.nextset()
            results.append(None if models is None else _instances(db, cursor.fetchall(), models))
    return results


# The names of the statements each PostgreSQL session holds prepared, by its psycopg
# connection. A session missing here starts over with DEALLOCATE ALL: one not seen yet, or
# one whose query that prepared some failed (a PREPARE outlives a rollback, so which ran is
# unsaid).
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# A statement with more parameters (a batch of rows) is rarely sent twice: it goes as written.
PREPARED_PARAMS_MAX = 100


def _execute(db, cursor, queries) -> int:
    """Send `queries` as one query string, each as EXECUTE of the session's prepared copy, so
    that PostgreSQL parses and plans it once per connection rather than once per request
    (that was 40 % of a move's PostgreSQL CPU, docs/benchmarks.md). A statement the session
    lacks is prepared first, in the same string. Returns how many results come before the
    statements'. Behind a pooler that gives each transaction any server session (PgBouncer's
    transaction mode, for which Django's DISABLE_SERVER_SIDE_CURSORS is set) nothing is
    prepared: the session that prepared a statement may not be the one that runs it."""
    if db.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"):
        cursor.execute("; ".join(sql for sql, _, _ in queries), [p for _, params, _ in queries for p in params])
        return 0
    session = db.connection
    names, head = _prepared.get(session), []
    if names is None:
        head.append("DEALLOCATE ALL")
        names = _prepared[session] = set()
    sent, params = [], []
    for sql, values, _ in queries:
        name = _name(sql)
        if name not in names and len(values) <= PREPARED_PARAMS_MAX:
            head.append(f"PREPARE {name} AS {_numbered(sql)}")
            names.add(name)
        if name in names:
            sent.append(f"EXECUTE {name}({', '.join(['%s'] * len(values))})" if values else f"EXECUTE {name}")
        else:
            sent.append(sql)
        params.extend(values)
    try:
        cursor.execute("; ".join(head + sent), params)
    except Exception:
        if head:
            _prepared.pop(session, None)
        raise
    return len(head)


@functools.lru_cache(maxsize=512)
def _name(sql: str) -> str:
    return "kandev_" + hashlib.blake2b(sql.encode(), digest_size=10).hexdigest()


def _numbered(sql: str) -> str:
    """`sql` with PostgreSQL's numbered parameters ($1, $2, ...) for psycopg's `%s`."""
    number = itertools.count(1)
    return re.sub(r"%%|%s", lambda m: m[0] if m[0] == "%%" else f"${next(number)}", sql)


def _instances(db, rows: list, models) -> list[tuple]:
    loaders = [_loaders(model, db.vendor) for model in models]
    result = []
    for row in rows:
        instances, start = [], 0
        for model, (names, convert) in zip(models, loaders, strict=True):
            values = list(row[start : start + len(names)])
            for index, col, converters in convert:
                for converter in converters:
                    values[index] = converter(values[index], col, db)
            instances.append(model.from_db(db.alias, names, values))
            start += len(names)
        result.append((*instances, *row[start:]))
    return result


@functools.cache
def _insert_statement(model, vendor: str) -> tuple[list, str, str]:
    fields = [f for f in model._meta.concrete_fields if not f.db_returning]  # not serial ids
    head = f"INSERT INTO {table(model)} ({', '.join(quote(f.column) for f in fields)}) VALUES "
    return fields, head, f"({', '.join(['%s'] * len(fields))})"


def insert(objs: list) -> None:
    """INSERT new instances of one model as `save()` would write them (`pre_save` fills
    auto_now fields; a creation time already given is kept, as an import restores it), in as
    few statements as the database allows. No save signals are
    sent (nothing listens to the models this is used for); serial ids stay unset."""
    fetch_together(*insert_statements(objs))


def insert_statements(objs: list) -> list[tuple]:
    """`insert()`'s statements as `fetch_together()` writes, to send with other statements;
    the instances count as saved from here on."""
    if not objs:
        return []
    fields, head, row = _insert_statement(type(objs[0]), connection.vendor)
    per_statement = max(1, connection.ops.bulk_batch_size(fields, objs))  # SQLite caps parameters
    statements = []
    for start in range(0, len(objs), per_statement):
        batch, params = objs[start : start + per_statement], []
        for obj in batch:
            params.extend(f.get_db_prep_save(_added_value(f, obj), connection) for f in fields)
            obj._state.adding, obj._state.db = False, connection.alias
        statements.append((head + ", ".join([row] * len(batch)), params, None))
    return statements


def _added_value(field, obj):
    given = getattr(obj, field.attname)
    return given if getattr(field, "auto_now_add", False) and given is not None else field.pre_save(obj, True)


@functools.cache
def _update_statement(model, names: tuple, vendor: str) -> tuple[list, str]:
    fields = [model._meta.get_field(name) for name in names]
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return fields, f"UPDATE {table(model)} SET {assignments} WHERE {quote(model._meta.pk.column)} = %s"


def update(obj, names: list) -> None:
    """UPDATE the fields `names` of a saved instance's row as `save(update_fields=names)`
    writes them (`pre_save` fills auto_now fields), without the ORM's compiler. No save
    signals are sent (nothing listens to the models this is used for)."""
    fields, statement = _update_statement(type(obj), tuple(names), connection.vendor)
    params = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in fields]
    params.append(type(obj)._meta.pk.get_db_prep_value(obj.pk, connection))
    fetch_together((statement, params, None))
