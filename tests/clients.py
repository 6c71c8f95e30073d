"""Clients signed in as a given person: `api_for` for the REST API, `browser_for` for pages."""

from django.test import Client
from rest_framework.test import APIClient


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def browser_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
