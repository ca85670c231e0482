"""The project's tools beside the product: controls that tests and harnesses build."""
