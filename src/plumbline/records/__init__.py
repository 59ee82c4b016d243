"""Records: the contract between stages. Typed models, JSON Schemas, readers and writers."""
