from django.urls import path

from flow import api, views

api_urlpatterns = [
    path("workflows/<uuid:pk>/flow/cfd/", api.CfdView.as_view(), name="flow-cfd"),
    path("workflows/<uuid:pk>/flow/wip/", api.WipView.as_view(), name="flow-wip"),
    path("workflows/<uuid:pk>/flow/cycle-times/", api.CycleTimesView.as_view(), name="flow-cycle-times"),
    path("workflows/<uuid:pk>/flow/throughput/", api.ThroughputView.as_view(), name="flow-throughput"),
    path("workflows/<uuid:pk>/flow/aging/", api.AgingView.as_view(), name="flow-aging"),
    path("workflows/<uuid:pk>/flow/limits/", api.LimitsView.as_view(), name="flow-limits"),
    path("workflows/<uuid:pk>/flow/queues/", api.QueuesView.as_view(), name="flow-queues"),
    path("workflows/<uuid:pk>/flow/forecast/", api.ForecastView.as_view(), name="flow-forecast"),
    path("workflows/<uuid:pk>/flow/sle/", api.SleView.as_view(), name="flow-sle"),
    path("workflows/<uuid:pk>/flow/advice/", api.AdviceView.as_view(), name="flow-advice"),
    path("workflows/<uuid:pk>/flow/blockers/", api.BlockersView.as_view(), name="flow-blockers"),
    path("workflows/<uuid:pk>/flow/efficiency/", api.EfficiencyView.as_view(), name="flow-efficiency"),
    path("workflows/<uuid:pk>/flow/experiments/", api.ExperimentsView.as_view(), name="flow-experiments"),
    path("workflows/<uuid:pk>/flow/limit-changes/", api.LimitChangesView.as_view(), name="flow-limit-changes"),
]

page_urlpatterns = [
    path("workflows/<uuid:workflow_id>/flow/", views.flow_page, name="flow"),
]
