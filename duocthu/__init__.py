"""duocthu: grounded drug-information assistant over a Vietnamese formulary."""
