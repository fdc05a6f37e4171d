"""Fills a moto server (tools/objstore/setup.sh) for the object-store tests, then turns its
authentication on: every later request must carry a valid AWS Signature V4 of a known key.

Reads a plan as JSON on stdin:
  {"endpoint": "http://127.0.0.1:PORT",
   "buckets": {"name": {"public": bool, "objects": {"key": "/local/file"}}},
  (a public bucket's policy lets anyone read its objects, unsigned),
   "auth": true}
and prints JSON: {"reader": {...}, "nobody": {...}, "session": {...}}, each with access_key_id,
secret_access_key (and session_token): a user who may read every bucket, a user who may read none,
and the temporary credentials of a role that may read every bucket (sts:AssumeRole).
"""
import json
import sys
import urllib.request

import boto3

plan = json.load(sys.stdin)
endpoint = plan["endpoint"]
# Before authentication is on, moto takes any key; these only make boto3 sign.
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam = boto3.client("iam", **setup)
s3 = boto3.client("s3", **setup)
sts = boto3.client("sts", **setup)

READ_ALL = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}]})
policy_arn = iam.create_policy(PolicyName="read-all", PolicyDocument=READ_ALL)["Policy"]["Arn"]


def user(name, policy):
    iam.create_user(UserName=name)
    if policy:
        iam.attach_user_policy(UserName=name, PolicyArn=policy)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {"access_key_id": key["AccessKeyId"], "secret_access_key": key["SecretAccessKey"]}


out = {"reader": user("reader", policy_arn), "nobody": user("nobody", None)}

trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
role = iam.create_role(RoleName="reader-role", AssumeRolePolicyDocument=trust)["Role"]
iam.attach_role_policy(RoleName="reader-role", PolicyArn=policy_arn)
creds = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="tessera-test", DurationSeconds=3600)["Credentials"]
out["session"] = {
    "access_key_id": creds["AccessKeyId"],
    "secret_access_key": creds["SecretAccessKey"],
    "session_token": creds["SessionToken"],
    "expiration": creds["Expiration"].isoformat(),
}

for name, bucket in plan["buckets"].items():
    s3.create_bucket(Bucket=name)
    if bucket.get("public"):
        anyone = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{name}/*"}
        s3.put_bucket_policy(Bucket=name, Policy=json.dumps({"Version": "2012-10-17", "Statement": [anyone]}))
    for key, local in bucket.get("objects", {}).items():
        with open(local, "rb") as f:
            s3.put_object(Bucket=name, Key=key, Body=f.read())

if plan.get("auth", True):
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})).read()
print(json.dumps(out))
