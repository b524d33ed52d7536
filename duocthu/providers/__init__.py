"""Providers behind protocols: embedding, rerank and LLM. Each SDK is imported only in its adapter."""
