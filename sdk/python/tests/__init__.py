"""The SDK's tests, run against a live carryon server by cmd/carryon's TestPythonSDK."""
