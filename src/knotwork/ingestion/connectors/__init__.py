"""Live-API connectors (Confluence Cloud REST v2, Slack Web API) feeding incremental sync.

Each connector is a thin HTTP client (``ConfluenceClient``, ``SlackClient``) plus a sync
source (``ConfluenceSource``, ``SlackSource``) that turns the API's objects into
``RawDocument``s with the same mapping as the offline export loaders.
"""
