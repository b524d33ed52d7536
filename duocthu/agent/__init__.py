"""The agent: query understanding → routing table → retrieval → grounded answer."""
