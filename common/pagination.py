from rest_framework.pagination import PageNumberPagination

from common.filters import reject_unknown_params


class Pagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def paginate_queryset(self, queryset, request, view=None):
        """Every list pages: an unknown query parameter is refused here (common/filters.py)."""
        if view is not None:
            reject_unknown_params(request, view, self)
        return super().paginate_queryset(queryset, request, view)
