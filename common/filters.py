"""The query parameters a list endpoint accepts, checked once for every list.

Every list endpoint pages (common.pagination.Pagination), and the paginator asks here
before paging: a parameter that is neither the page's own (`page`, `page_size`), `format`,
a filter of the view's FilterSet nor one the view reads itself (`list_params`) is a 400
naming it, rather than a filter silently ignored and every row coming back.
"""

from common.errors import Invalid

ALWAYS = frozenset({"format"})


def known_params(view, paginator) -> set[str]:
    known = set(ALWAYS) | {paginator.page_query_param}
    if paginator.page_size_query_param:
        known.add(paginator.page_size_query_param)
    filterset_class = getattr(view, "filterset_class", None)
    if filterset_class is not None:
        known.update(filterset_class.base_filters)
    known.update(getattr(view, "list_params", ()))
    return known


def reject_unknown_params(request, view, paginator) -> None:
    unknown = sorted(set(request.query_params) - known_params(view, paginator))
    if unknown:
        raise Invalid({name: ["Unknown query parameter."] for name in unknown})
