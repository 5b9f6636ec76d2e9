"""Tests of the self-play training package."""
